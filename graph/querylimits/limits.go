// Package querylimits is what one GraphQL operation may ask for and what it
// costs, checked before any resolver runs: the document's size, depth and
// names (DocumentCheck), its argument values (InputCheck), and its price,
// charged to the caller's budget (CostCheck), with the list bounds of the
// schema that the price reads (@listSize: ReadListSizes) and the query
// cache that writes out their defaults (DefaultsCache). graph.NewExecutor
// installs them. The codes of the operations they refuse are here too.
package querylimits

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// Limits bound what one operation may cost. Each is checked before the work
// it guards: tokens while the document is read, fields and depth (counted
// with every fragment expanded) before validation, whose cost grows with
// them, and the price of the operation (see cost.go) before any resolver runs.
type Limits struct {
	// Tokens bounds the document's length. The largest documents we know of,
	// the IDE's introspection query and the REST operations, have under 1,000.
	Tokens int
	// Fields bounds the field selections of the document once its fragments
	// are expanded: a kilobyte of fragments spreading each other twice over
	// expands to millions of fields, and validation visits each of them.
	Fields int
	// Width bounds the fields of one selection set, its fragments' included:
	// gqlgen merges a selection set's fields in time quadratic in their
	// number, once per object it is selected on. The widest object has 25.
	Width int
	// Depth bounds the nesting of selections. The deepest tree a front end
	// asks for (property, inventories, environments, items, photos, through
	// connection edges) is 10 deep; the IDE's introspection query is 13.
	Depth int
	// Cost bounds the price of an operation: how many fields its answer may
	// hold when every list returns as much as its bounds allow.
	Cost int
	// NameBytes bounds each name a client chooses (an alias, an operation,
	// fragment or variable name): an alias is written into the answer once
	// for every object it is selected on, so a long one multiplies the
	// answer's size where the price counts one field.
	NameBytes int

	// The input limits bound the values of arguments, literals and variables
	// alike (see inputs.go), which the token limit does not bound when they
	// come as variables. Each value in a list is an SQL bind parameter, and
	// each field set in an input object an SQL predicate.
	//
	// InputList bounds the values of one list (idIn: [...]); a filter with
	// more is better written another way.
	InputList int
	// InputObjectList bounds the input objects of one list (or: [...]).
	InputObjectList int
	// InputValues bounds the scalar values of all an operation's arguments:
	// far below the bind parameters a statement may have (PostgreSQL 65,535,
	// SQLite 32,766).
	InputValues int
	// InputFields bounds the fields set across an operation's input objects.
	// SQLite nests a filter's predicates into an expression tree about as
	// deep as it has predicates, and refuses one over 1,000 deep (12 nested
	// filters of 108 fields each were refused).
	InputFields int
	// InputNesting bounds how deep input objects nest (where: {not: {or:
	// [{...}]}} is 3 deep): room for any filter written by hand, and a bound
	// on the subqueries that filters across edges nest.
	InputNesting int
	// InputString bounds each string value, in characters. SQLite refuses a
	// LIKE pattern over 50,000 bytes (a Contains or HasPrefix filter, its
	// wildcards escaped: up to twice the value's bytes), and longer values
	// cost each comparison in proportion. The longest bounded field is an
	// address (256 characters), cursors and ids are under 200, and a search
	// in a description (unbounded text) of over a thousand characters is no
	// search anyone types.
	InputString int
}

// Default are the limits of the service (see docs/decisions.md).
var Default = Limits{Tokens: 10_000, Fields: 2_000, Width: 200, Depth: 20, Cost: 500_000, NameBytes: 100,
	InputList: 1_000, InputObjectList: 100, InputValues: 10_000, InputFields: 500, InputNesting: 16,
	InputString: 1_000}

// Error codes of refused operations, besides gqlgen's own parse and
// validation codes. Like those, they are request errors (422, or 400 with
// application/graphql-response+json).
// They are apperr's, under the names this package's callers know.
const (
	CodeQueryTooLarge = string(apperr.QueryTooLarge)
	CodeQueryTooDeep  = string(apperr.QueryTooDeep)
	CodeTooComplex    = string(apperr.TooComplex)
)

func init() {
	for _, code := range []string{CodeQueryTooLarge, CodeQueryTooDeep, CodeTooComplex} {
		errcode.RegisterErrorType(code, errcode.KindProtocol)
	}
}

// DocumentCheck refuses documents over Limits before the executor parses
// and validates them. Documents the executor has already validated are in its
// query cache (Cache) and were checked the first time they were seen.
type DocumentCheck struct {
	Limits Limits
	Cache  graphql.Cache[*ast.QueryDocument]
}

var (
	_ graphql.HandlerExtension          = DocumentCheck{}
	_ graphql.OperationParameterMutator = DocumentCheck{}
)

func (DocumentCheck) ExtensionName() string                   { return "QueryLimits" }
func (DocumentCheck) Validate(graphql.ExecutableSchema) error { return nil }
func (l DocumentCheck) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if _, ok := l.Cache.Get(ctx, params.Query); ok {
		return nil
	}
	return l.Limits.checkDocument(params.Query)
}

// checkDocument parses query within the token limit and checks the expanded
// size and depth of what it selects. A document that does not parse for
// another reason is left to the executor, which says why.
func (l Limits) checkDocument(query string) *gqlerror.Error {
	src := &ast.Source{Input: query}
	doc, err := parser.ParseQueryWithTokenLimit(src, l.Tokens)
	if err != nil {
		if tokensOver(src, l.Tokens) {
			return limitError(CodeQueryTooLarge, l.Tokens, "the document has more than %d tokens", l.Tokens)
		}
		return nil
	}
	if name, long := longName(doc, l.NameBytes); long {
		return limitError(CodeQueryTooLarge, l.NameBytes, "the name %s is longer than %d bytes: choose a shorter alias or name", apperr.Quote(name), l.NameBytes)
	}
	// Each operation and each fragment is measured with its fragments
	// expanded: validation walks every one of them, used or not.
	size := newSizer(doc, max(l.Fields, l.Width))
	var worst shape
	for _, op := range doc.Operations {
		worst = worst.widest(size.selections(op.SelectionSet))
	}
	for _, f := range doc.Fragments {
		worst = worst.widest(size.fragment(f.Name))
	}
	switch {
	case worst.fields > l.Fields:
		return limitError(CodeQueryTooLarge, l.Fields, "the document selects more than %d fields once its fragments are expanded", l.Fields)
	case worst.width > l.Width:
		return limitError(CodeQueryTooLarge, l.Width, "a selection set of the document selects more than %d fields, its fragments' included", l.Width)
	case worst.depth > l.Depth:
		return limitError(CodeQueryTooDeep, l.Depth, "the document nests selections more than %d deep", l.Depth)
	}
	return nil
}

// tokensOver reports whether src has more than limit tokens.
func tokensOver(src *ast.Source, limit int) bool {
	lex := lexer.New(src)
	for n := 0; ; n++ {
		tok, err := lex.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return false
		}
		if n >= limit {
			return true
		}
	}
}

// longName returns the first name the client chose in doc (an alias, an
// operation, fragment or variable name) that is over limit bytes.
func longName(doc *ast.QueryDocument, limit int) (string, bool) {
	var inSet func(ast.SelectionSet) (string, bool)
	inSet = func(set ast.SelectionSet) (string, bool) {
		for _, sel := range set {
			var children ast.SelectionSet
			switch sel := sel.(type) {
			case *ast.Field:
				if len(sel.Alias) > limit {
					return sel.Alias, true
				}
				children = sel.SelectionSet
			case *ast.InlineFragment:
				children = sel.SelectionSet
			case *ast.FragmentSpread:
				if len(sel.Name) > limit {
					return sel.Name, true
				}
			}
			if name, long := inSet(children); long {
				return name, true
			}
		}
		return "", false
	}
	for _, op := range doc.Operations {
		if len(op.Name) > limit {
			return op.Name, true
		}
		for _, v := range op.VariableDefinitions {
			if len(v.Variable) > limit {
				return v.Variable, true
			}
		}
		if name, long := inSet(op.SelectionSet); long {
			return name, true
		}
	}
	for _, f := range doc.Fragments {
		if len(f.Name) > limit {
			return f.Name, true
		}
		if name, long := inSet(f.SelectionSet); long {
			return name, true
		}
	}
	return "", false
}

func limitError(code string, limit int, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": code, "limit": limit}
	return err
}

// shape is the size of a selection set with its fragments expanded: its
// fields in all, its fields at its own level (top), the most at any level
// within it (width), and its depth.
type shape struct{ fields, top, width, depth int }

// widest is the larger of each measure of s and o.
func (s shape) widest(o shape) shape {
	return shape{fields: max(s.fields, o.fields), top: max(s.top, o.top), width: max(s.width, o.width), depth: max(s.depth, o.depth)}
}

// sizer measures selection sets, each fragment once: a fragment's shape is
// the same wherever it is spread, so a document whose fragments spread each
// other exponentially is measured in time linear in its length. Counts stop
// growing past the limit, so they cannot overflow.
type sizer struct {
	fragments map[string]*ast.FragmentDefinition
	measured  map[string]shape
	visiting  map[string]bool
	limit     int
}

func newSizer(doc *ast.QueryDocument, limit int) *sizer {
	s := &sizer{
		fragments: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		measured:  make(map[string]shape, len(doc.Fragments)),
		visiting:  map[string]bool{},
		limit:     limit,
	}
	for _, f := range doc.Fragments {
		s.fragments[f.Name] = f
	}
	return s
}

func (s *sizer) selections(set ast.SelectionSet) shape {
	var out shape
	for _, sel := range set {
		var inner shape // what sel adds below this level
		switch sel := sel.(type) {
		case *ast.Field:
			child := s.selections(sel.SelectionSet)
			out.top++
			inner = shape{fields: child.fields + 1, width: child.width, depth: child.depth + 1}
		case *ast.InlineFragment:
			inner = s.selections(sel.SelectionSet)
			out.top += inner.top
		case *ast.FragmentSpread:
			inner = s.fragment(sel.Name)
			out.top += inner.top
		}
		out.fields = min(out.fields+inner.fields, s.limit+1)
		out.top = min(out.top, s.limit+1)
		out.width = max(out.width, inner.width)
		out.depth = max(out.depth, inner.depth)
	}
	out.width = max(out.width, out.top)
	return out
}

// fragment measures a named fragment. Unknown fragments and cycles measure
// nothing here: validation refuses both.
func (s *sizer) fragment(name string) shape {
	if sh, ok := s.measured[name]; ok {
		return sh
	}
	f, ok := s.fragments[name]
	if !ok || s.visiting[name] {
		return shape{}
	}
	s.visiting[name] = true
	sh := s.selections(f.SelectionSet)
	delete(s.visiting, name)
	s.measured[name] = sh
	return sh
}
