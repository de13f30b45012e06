package querylimits

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// The input check walks every argument of an operation, literals and
// variables alike, after validation and before any resolver, and refuses as
// INVALID_ARGUMENT, naming the argument path, what the database would fail
// on and only tell as an internal error:
//
//   - a NUL character in a string: PostgreSQL can neither store nor compare it;
//   - a string over Limits.InputString characters: SQLite refuses a LIKE
//     pattern over 50,000 bytes, and no stored value it could match is that long;
//   - an empty filter inside a filter (where: {not: {}}): entgql builds no
//     predicate for it and fails (the argument itself may be empty: no filter);
//   - more than Limits.InputList values in one list, and more than
//     Limits.InputValues in the operation: each is a bind parameter, and
//     drivers stop at 65,535 (PostgreSQL) or 32,766 (SQLite);
//   - more than Limits.InputObjectList objects in one list, more than
//     Limits.InputFields fields set across the operation's input objects, and
//     input objects nested more than Limits.InputNesting deep: each field set
//     is an SQL predicate, and SQLite chains a filter's predicates into one
//     expression tree it refuses past 1,000 deep.
//
// A variable used twice counts twice, as the work it causes does.
//
// The inputs of writes (recordInputs) are no filters: what a write holds is
// bounded by internal/records, as an import's line is (60 rooms of at most
// 200 items, 1,000 in all; each text as ent/schema/bounds.go bounds it),
// which names the field at fault in the input's own terms. Inside them only
// the count of values applies (a bind parameter each).

// recordInputs are the input types whose values internal/records checks.
var recordInputs = map[string]bool{"CreateInventoryInput": true, "UpdateInventoryInput": true}

// InputCheck runs the input check.
type InputCheck struct {
	Limits Limits
	Schema *ast.Schema
}

var (
	_ graphql.HandlerExtension        = InputCheck{}
	_ graphql.OperationContextMutator = InputCheck{}
)

func (InputCheck) ExtensionName() string                   { return "InputLimits" }
func (InputCheck) Validate(graphql.ExecutableSchema) error { return nil }

func (x InputCheck) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	w := inputWalk{limits: &x.Limits, schema: x.Schema, vars: opCtx.Variables}
	if err := w.selections(opCtx.Operation.SelectionSet); err != nil {
		return argumentError(err.path, "%s", err.message)
	}
	return nil
}

// inputWalk counts what an operation's arguments hold.
type inputWalk struct {
	limits         *Limits
	schema         *ast.Schema
	vars           map[string]any
	values, fields int
	// record is set inside an input of recordInputs.
	record bool
}

// inputError is a refused input value. Its path is built as the walk
// unwinds, so that an accepted operation allocates nothing for it.
type inputError struct {
	path, message string
}

// in prefixes the path with the name of the field or argument holding it.
func (e *inputError) in(name string) *inputError {
	e.path = joinPath(name, e.path)
	return e
}

// at prefixes the path with a list index.
func (e *inputError) at(i int) *inputError {
	e.path = joinPath("["+strconv.Itoa(i)+"]", e.path)
	return e
}

func joinPath(head, tail string) string {
	if tail == "" || tail[0] == '[' {
		return head + tail
	}
	return head + "." + tail
}

func refuse(format string, args ...any) *inputError {
	return &inputError{message: fmt.Sprintf(format, args...)}
}

func (w *inputWalk) selections(set ast.SelectionSet) *inputError {
	for _, sel := range set {
		var err *inputError
		switch sel := sel.(type) {
		case *ast.Field:
			if err = w.arguments(sel); err == nil {
				err = w.selections(sel.SelectionSet)
			}
		case *ast.InlineFragment:
			err = w.selections(sel.SelectionSet)
		case *ast.FragmentSpread:
			if sel.Definition != nil {
				err = w.selections(sel.Definition.SelectionSet)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *inputWalk) arguments(f *ast.Field) *inputError {
	if f.Definition == nil {
		return nil
	}
	for _, arg := range f.Arguments {
		def := f.Definition.Arguments.ForName(arg.Name)
		if def == nil {
			continue
		}
		if err := w.literal(arg.Value, def.Type, 0); err != nil {
			return err.in(arg.Name)
		}
	}
	return nil
}

// literal checks a value written in the document, of type typ, within
// nesting input objects.
func (w *inputWalk) literal(v *ast.Value, typ *ast.Type, nesting int) *inputError {
	switch v.Kind {
	case ast.NullValue:
		return nil
	case ast.Variable:
		value, ok := w.vars[v.Raw]
		if !ok {
			return nil // not given, and no default
		}
		return w.value(value, typ, nesting)
	case ast.ListValue:
		elem := listElem(typ)
		if err := w.list(len(v.Children), elem); err != nil {
			return err
		}
		for i, c := range v.Children {
			if err := w.literal(c.Value, elem, nesting); err != nil {
				return err.at(i)
			}
		}
		return nil
	case ast.ObjectValue:
		def, err := w.object(typ, nesting)
		if err != nil {
			return err
		}
		defer w.enter(def)()
		set := 0
		for _, c := range v.Children {
			field := def.Fields.ForName(c.Name)
			if field == nil || !setLiteral(c.Name, c.Value, w.vars) {
				continue
			}
			set++
			if err := w.field(); err != nil {
				return err.in(c.Name)
			}
			if err := w.literal(c.Value, field.Type, nesting+1); err != nil {
				return err.in(c.Name)
			}
		}
		return emptyFilter(def, set, nesting)
	case ast.StringValue, ast.BlockValue:
		return w.scalar(v.Raw)
	}
	return w.scalar("")
}

// value checks a variable's value, of type typ, within nesting input objects.
// Variables arrive decoded from JSON, or built by the REST adapter, and
// coerced by gqlgen, which may turn a single value into a typed slice.
func (w *inputWalk) value(v any, typ *ast.Type, nesting int) *inputError {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return w.scalar(v)
	case []any:
		elem := listElem(typ)
		if err := w.list(len(v), elem); err != nil {
			return err
		}
		for i, item := range v {
			if err := w.value(item, elem, nesting); err != nil {
				return err.at(i)
			}
		}
		return nil
	case map[string]any:
		def, err := w.object(typ, nesting)
		if err != nil {
			return err
		}
		defer w.enter(def)()
		set := 0
		for name, item := range v {
			field := def.Fields.ForName(name)
			if field == nil || !setValue(name, item) {
				continue
			}
			set++
			if err := w.field(); err != nil {
				return err.in(name)
			}
			if err := w.value(item, field.Type, nesting+1); err != nil {
				return err.in(name)
			}
		}
		return emptyFilter(def, set, nesting)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
		elem := listElem(typ)
		if err := w.list(rv.Len(), elem); err != nil {
			return err
		}
		for i := range rv.Len() {
			if err := w.value(rv.Index(i).Interface(), elem, nesting); err != nil {
				return err.at(i)
			}
		}
		return nil
	}
	return w.scalar("") // a number, a boolean, or a typed value such as a UUID
}

// listElem is the type of a list's items; a list where a single value is
// expected is left to validation, and its items checked as that value.
func listElem(typ *ast.Type) *ast.Type {
	if typ.Elem != nil {
		return typ.Elem
	}
	return typ
}

// enter notes that the walk is in an input object of def's type until the
// function it returns is called.
func (w *inputWalk) enter(def *ast.Definition) func() {
	was := w.record
	w.record = was || recordInputs[def.Name]
	return func() { w.record = was }
}

func (w *inputWalk) list(n int, elem *ast.Type) *inputError {
	if w.record {
		return nil
	}
	if w.isObject(elem) {
		if n > w.limits.InputObjectList {
			return refuse("holds %d input objects, more than %d, the limit of one list", n, w.limits.InputObjectList)
		}
	} else if n > w.limits.InputList {
		return refuse("holds %d values, more than %d, the limit of one list", n, w.limits.InputList)
	}
	return nil
}

func (w *inputWalk) isObject(typ *ast.Type) bool {
	def := w.schema.Types[typ.Name()]
	return def != nil && def.Kind == ast.InputObject
}

// object returns the definition of an input object at nesting, refusing one
// nested too deep.
func (w *inputWalk) object(typ *ast.Type, nesting int) (*ast.Definition, *inputError) {
	if nesting >= w.limits.InputNesting {
		return nil, refuse("nests input objects more than %d deep, the limit", w.limits.InputNesting)
	}
	def := w.schema.Types[typ.Name()]
	if def == nil {
		def = &ast.Definition{} // validation refuses it before this runs
	}
	return def, nil
}

func (w *inputWalk) field() *inputError {
	if w.record {
		return nil
	}
	if w.fields++; w.fields > w.limits.InputFields {
		return refuse("is past the limit: the input objects of an operation may set at most %d fields in all", w.limits.InputFields)
	}
	return nil
}

func (w *inputWalk) scalar(s string) *inputError {
	if w.values++; w.values > w.limits.InputValues {
		return refuse("is past the limit: the arguments of an operation may hold at most %d values in all", w.limits.InputValues)
	}
	if w.record {
		return nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		return refuse("must not contain a NUL character (\\u0000)")
	}
	// Counting characters costs a pass over the string: only for one whose
	// bytes, at least as many, are over the limit. The message quotes a
	// prefix, to recognise the value by, as every message does.
	if len(s) > w.limits.InputString {
		if n := utf8.RuneCountInString(s); n > w.limits.InputString {
			return refuse("%s is %d characters long, more than %d, the limit of a string value", apperr.Quote(s), n, w.limits.InputString)
		}
	}
	return nil
}

// emptyFilter refuses a filter inside a filter that sets nothing: entgql
// builds no predicate for it and fails. The argument itself may be empty: it
// then filters nothing out.
func emptyFilter(def *ast.Definition, set, nesting int) *inputError {
	if set == 0 && nesting > 0 && strings.HasSuffix(def.Name, "WhereInput") {
		return refuse("is an empty filter (null, [] and an IsNil or NotNil false set nothing): give it a condition, or leave it out")
	}
	return nil
}

// setLiteral reports whether a field's literal value sets it, as entgql reads
// it: null, an empty list, an absent variable and false for a ...IsNil or
// ...NotNil field (a plain bool in ent's filter) do not.
func setLiteral(name string, v *ast.Value, vars map[string]any) bool {
	switch v.Kind {
	case ast.NullValue:
		return false
	case ast.ListValue:
		return len(v.Children) > 0
	case ast.BooleanValue:
		return v.Raw == "true" || !nilTest(name)
	case ast.Variable:
		value, ok := vars[v.Raw]
		return ok && setValue(name, value)
	}
	return true
}

func setValue(name string, v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case []any:
		return len(v) > 0
	case bool:
		return v || !nilTest(name)
	case string, map[string]any:
		return true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return rv.Len() > 0
	}
	return true
}

// nilTest reports whether an input field is one of entgql's IsNil or NotNil
// predicates.
func nilTest(name string) bool {
	return strings.HasSuffix(name, "IsNil") || strings.HasSuffix(name, "NotNil")
}
