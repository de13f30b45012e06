// Package direct is the runtime of the direct executor: code generated from
// the GraphQL schema (by package directgen, into graph/direct_generated.go)
// that runs a query's fields one after another on one goroutine and writes
// the answer's JSON as it goes, instead of gqlgen's per-field machinery (a
// field context, closures and a marshaler per field, a goroutine per list
// element and per field bound to a method with a context).
//
// It answers what gqlgen would answer, byte for byte, errors included: a
// field whose resolver, method or arguments fail is answered as gqlgen
// answers it (Path.Failed), a nil where the schema does not allow one too
// (Path.InvalidNull), and such a null goes up to the nearest position that
// may be null (ErrNull), so that an operation runs once. The executor
// chooses gqlgen's before running for what this one was not generated for
// (subscriptions, introspection, @defer); ErrFallback is left for bugs (a
// panic). Queries and mutations run on it; a mutation's writes run once
// even when gqlgen's answers it after this one gave it up (Once).
package direct

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// ErrFallback is returned when the direct executor cannot answer: a panic,
// or a value no record holds (a nil UUID). The executor chooses gqlgen's
// executor before running for what the direct one was not generated for
// (subscriptions, introspection, @defer), so this is for bugs.
var ErrFallback = errors.New("direct: run the operation on gqlgen's executor")

// Failed wraps a field's failure that no partial answer can carry: the
// database is unavailable (Failed is used for those only). The executor
// answers it as one error, no data, at once: a second run would wait as long
// again, only to fail.
func Failed(err error) error { return &failure{err: err} }

type failure struct{ err error }

func (f *failure) Error() string        { return "direct: " + f.err.Error() }
func (f *failure) Is(target error) bool { return target == ErrFallback }
func (f *failure) Unwrap() error        { return f.err }

// ErrNull is returned by the code that writes a value when the value is
// null where the schema does not allow it (its error already answered): the
// nearest position above that may be null becomes null, as gqlgen's
// executor makes it; past the root, the answer's data is null.
var ErrNull = errors.New("direct: null where the schema does not allow it")

// errReported: a field's failure was answered where it happened (its
// arguments did not parse).
var errReported = errors.New("direct: the field's error is answered")

// Path is where the executor is in the answer: the alias of each field and
// the index of each list element from the root, kept as it goes (one store
// per field and per element) so that an error names its place as gqlgen's
// does. Elements of a list share their field contexts here (Contexts), so
// those cannot say it.
type Path struct{ segments []segment }

type segment struct {
	alias string
	index int // -1: a field
}

// NewPath returns a path with room for the depth of most answers.
func NewPath() Path { return Path{segments: make([]segment, 0, 16)} }

// Enter starts a level: an object's fields or a list's elements.
func (p *Path) Enter() int {
	p.segments = append(p.segments, segment{index: -1})
	return len(p.segments) - 1
}

// Field says the level at is at the field alias.
func (p *Path) Field(at int, alias string) { p.segments[at] = segment{alias: alias, index: -1} }

// Index says the level at is at element i.
func (p *Path) Index(at, i int) { p.segments[at] = segment{index: i} }

// Leave ends the level at.
func (p *Path) Leave(at int) { p.segments = p.segments[:at] }

// Field is what gqlgen's field context holds of a field besides its
// selection: its object, and whether a method or a resolver gives it.
type Field struct {
	Object               string
	IsMethod, IsResolver bool
}

// context is ctx with the field context gqlgen's executor gives field at
// the current path, the last elements levels being list elements of its
// value: its path, location and description in errors are then gqlgen's.
func (p *Path) context(ctx context.Context, field graphql.CollectedField, of Field, elements int) context.Context {
	named := len(p.segments) - 1 - elements
	var parent *graphql.FieldContext
	for _, s := range p.segments[:named] {
		parent = s.fieldContext(parent)
	}
	leaf := &graphql.FieldContext{Object: of.Object, Field: field, IsMethod: of.IsMethod, IsResolver: of.IsResolver}
	ctx = graphql.WithFieldContext(ctx, leaf)
	leaf.Parent = parent
	for _, s := range p.segments[named+1:] {
		ctx = graphql.WithFieldContext(ctx, s.fieldContext(nil))
	}
	return ctx
}

func (s segment) fieldContext(parent *graphql.FieldContext) *graphql.FieldContext {
	if s.index >= 0 {
		i := s.index
		return &graphql.FieldContext{Parent: parent, Index: &i}
	}
	return &graphql.FieldContext{Parent: parent, Field: graphql.CollectedField{Field: &ast.Field{Alias: s.alias}}}
}

// Failed answers the failure err of field (its resolver's, its method's or
// its arguments') as gqlgen's executor does (graphql.ResolveField): the
// error at the field's path and location; the caller makes the field null.
// An outage (UNAVAILABLE) is returned instead (Failed), for the executor to
// answer whole.
func (p *Path) Failed(ctx context.Context, op *graphql.OperationContext, field graphql.CollectedField, of Field, err error) error {
	switch {
	case err == errReported:
		return nil
	case apperr.CodeOf(err) == apperr.Unavailable:
		return Failed(err)
	}
	ctx = p.context(ctx, field, of, 0)
	op.Error(ctx, graphql.AddFieldLocationToError(ctx, err))
	return nil
}

// InvalidNull answers a nil where the schema does not allow one, as
// gqlgen's executor does (graphql.AddInvalidNullError): the error at its
// path, elements levels of list below field. The caller makes it null.
func (p *Path) InvalidNull(ctx context.Context, field graphql.CollectedField, of Field, declaredType string, elements int) {
	graphql.AddInvalidNullError(p.context(ctx, field, of, elements), declaredType)
}

// ErrTooLarge is returned when an answer grows past its writer's limit: the
// operation stops there, and is not run again on gqlgen's executor.
var ErrTooLarge = errors.New("direct: the answer is over its size limit")

// Writer is the JSON of an answer being written, up to a limit.
type Writer struct {
	buf   []byte
	limit int // 0: none
}

// Object starts an object, or says the answer is over its limit. Checked
// once an object, it holds an answer to its limit and one object more.
func (w *Writer) Object() error {
	if w.limit > 0 && len(w.buf) > w.limit {
		return ErrTooLarge
	}
	if cap(w.buf)-len(w.buf) < minFree && cap(w.buf) >= minFree {
		w.grow()
	}
	w.buf = append(w.buf, '{')
	return nil
}

// minFree is the room an object starts with, most objects' whole size.
const minFree = 4 << 10

// grow doubles the buffer, up to a little past the limit. append grows a
// large slice by a quarter at a time, which allocates about five times the
// final size along the way; doubling allocates twice.
func (w *Writer) grow() {
	size := 2 * cap(w.buf)
	if w.limit > 0 {
		size = min(size, w.limit+64<<10)
	}
	if size <= cap(w.buf) {
		return
	}
	grown := make([]byte, len(w.buf), size)
	copy(grown, w.buf)
	w.buf = grown
}

// Len is how much was written: a mark to Truncate to.
func (w *Writer) Len() int { return len(w.buf) }

// Truncate drops what was written after mark.
func (w *Writer) Truncate(mark int) { w.buf = w.buf[:mark] }

// Bytes is what was written.
func (w *Writer) Bytes() []byte { return w.buf }

// Write lets gqlgen's marshalers write here.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// WriteString lets gqlgen's marshalers write here.
func (w *Writer) WriteString(s string) (int, error) {
	w.buf = append(w.buf, s...)
	return len(s), nil
}

// Append writes JSON written before (a kept tree), or says the answer is
// over its limit.
func (w *Writer) Append(b []byte) error {
	if w.limit > 0 && len(w.buf)+len(b) > w.limit {
		return ErrTooLarge
	}
	w.buf = append(w.buf, b...)
	return nil
}

// Raw writes JSON as it is.
func (w *Writer) Raw(s string) { w.buf = append(w.buf, s...) }

// Byte writes one byte of JSON.
func (w *Writer) Byte(b byte) { w.buf = append(w.buf, b) }

// Key starts the i-th member of an object.
func (w *Writer) Key(i int, name string) {
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	w.String(name)
	w.buf = append(w.buf, ':')
}

// Comma separates the i-th element of a list from the one before.
func (w *Writer) Comma(i int) {
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
}

// Null writes null.
func (w *Writer) Null() { w.buf = append(w.buf, "null"...) }

// Bool writes a Boolean.
func (w *Writer) Bool(b bool) { w.buf = strconv.AppendBool(w.buf, b) }

// Int writes an Int, as gqlgen's MarshalInt does.
func (w *Writer) Int(n int) { w.buf = strconv.AppendInt(w.buf, int64(n), 10) }

// UUID writes an ID, as gqlgen's MarshalUUID does, but for the nil UUID,
// which gqlgen writes as null: the generated code gives that one up.
func (w *Writer) UUID(id uuid.UUID) {
	var text [36]byte
	hexEncode(text[:], id)
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, text[:]...)
	w.buf = append(w.buf, '"')
}

// String writes a String, escaped exactly as gqlgen's MarshalString does
// (byte by byte: the bytes it escapes are ASCII, never part of a longer
// UTF-8 sequence, and it writes invalid UTF-8 as it is).
func (w *Writer) String(s string) {
	w.buf = append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		w.buf = append(w.buf, s[start:i]...)
		switch c {
		case '\t':
			w.buf = append(w.buf, `\t`...)
		case '\r':
			w.buf = append(w.buf, `\r`...)
		case '\n':
			w.buf = append(w.buf, `\n`...)
		case '\\':
			w.buf = append(w.buf, `\\`...)
		case '"':
			w.buf = append(w.buf, `\"`...)
		default:
			w.buf = append(w.buf, `\u00`...)
			w.buf = append(w.buf, upperHex[c>>4], upperHex[c&0xf])
		}
		start = i + 1
	}
	w.buf = append(w.buf, s[start:]...)
	w.buf = append(w.buf, '"')
}

// Set replaces what was written with b, which extends it: for scalars
// whose package appends their JSON to a buffer (internal/scalar).
func (w *Writer) Set(b []byte) { w.buf = b }

const (
	hexDigits = "0123456789abcdef"
	upperHex  = "0123456789ABCDEF" // gqlgen's escapes
)

func hexEncode(dst []byte, id uuid.UUID) {
	j := 0
	for i, b := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexDigits[b>>4], hexDigits[b&0xf]
		j += 2
	}
}

// Fields collects the fields of selection sets, as gqlgen's CollectFields
// does, once per selection set and type in an operation: every element of a
// list shares its selection set.
type Fields struct {
	op    *graphql.OperationContext
	seen  map[fieldsKey][]graphql.CollectedField
	last  fieldsKey
	lastF []graphql.CollectedField
}

type fieldsKey struct {
	set *ast.Selection
	n   int
	typ string
}

// NewFields collects fields for op.
func NewFields(op *graphql.OperationContext) *Fields {
	return &Fields{op: op, seen: make(map[fieldsKey][]graphql.CollectedField, 16)}
}

// Of collects set's fields for an object that satisfies implementors (its
// own type name first). A deferred fragment is given up to gqlgen.
func (f *Fields) Of(set ast.SelectionSet, implementors []string) ([]graphql.CollectedField, error) {
	key := fieldsKey{set: unsafe.SliceData(set), n: len(set), typ: implementors[0]}
	if key == f.last && f.lastF != nil {
		return f.lastF, nil
	}
	fields, ok := f.seen[key]
	if !ok {
		fields = graphql.CollectFields(f.op, set, implementors)
		for _, field := range fields {
			if field.IsDeferred() {
				return nil, ErrFallback
			}
		}
		f.seen[key] = fields
	}
	f.last, f.lastF = key, fields
	return fields, nil
}

// Contexts gives each field bound to a resolver or to a method that takes a
// context the field context gqlgen would (resolvers and ent's edge methods
// read their field, its alias and its arguments from it), with its
// arguments parsed by gqlgen's generated parser. Both depend only on the
// field, the variables and the parent's context, so the elements of a list,
// which share their parent's context, share them: made once per list, not
// once per element.
type Contexts struct {
	op   *graphql.OperationContext
	path *Path
	vars map[string]any
	args map[*ast.Field]map[string]any
	made map[contextKey]contextOf
}

type contextKey struct {
	parent context.Context
	field  *ast.Field
}

type contextOf struct {
	ctx context.Context
	fc  *graphql.FieldContext
}

// NewContexts makes field contexts for the operation op, at path.
func NewContexts(op *graphql.OperationContext, path *Path) *Contexts {
	return &Contexts{op: op, path: path, vars: op.Variables, args: map[*ast.Field]map[string]any{}, made: map[contextKey]contextOf{}}
}

// Of returns the context of field of an object, below parent. parse is
// gqlgen's argument parser of the field, nil when it takes none. Arguments
// that do not parse are answered here, as gqlgen answers them: the error
// returned then (with parent) is for Path.Failed, which knows it.
func (c *Contexts) Of(parent context.Context, object string, field graphql.CollectedField, isMethod, isResolver bool,
	parse func(context.Context, map[string]any) (map[string]any, error)) (context.Context, *graphql.FieldContext, error) {
	key := contextKey{parent: parent, field: field.Field}
	if made, ok := c.made[key]; ok {
		return made.ctx, made.fc, nil
	}
	var args map[string]any
	if parse != nil {
		var ok bool
		if args, ok = c.args[field.Field]; !ok {
			var err error
			if args, err = parse(parent, field.ArgumentMap(c.vars)); err != nil {
				// Parsed again at the field's path: its errors name it.
				at := c.path.context(parent, field, Field{Object: object, IsMethod: isMethod, IsResolver: isResolver}, 0)
				if _, err := parse(at, field.ArgumentMap(c.vars)); err != nil {
					c.op.Error(at, err)
				}
				return parent, nil, errReported
			}
			c.args[field.Field] = args
		}
	}
	fc := &graphql.FieldContext{Object: object, Field: field, Args: args, IsMethod: isMethod, IsResolver: isResolver}
	ctx := graphql.WithFieldContext(parent, fc)
	c.made[key] = contextOf{ctx: ctx, fc: fc}
	return ctx, fc, nil
}

var writers = sync.Pool{New: func() any { return &Writer{buf: make([]byte, 0, 32<<10)} }}

// Answer runs write with a pooled writer and returns what it wrote, in a
// slice of its own, exactly as long: the buffer, grown as it was, goes back
// to the pool. Past limit bytes (none when 0) it stops with ErrTooLarge.
func Answer(limit int, write func(*Writer) error) ([]byte, error) {
	w := writers.Get().(*Writer)
	w.limit = limit
	defer func() {
		if cap(w.buf) <= 1<<20 { // a huge answer's buffer is let go
			w.buf = w.buf[:0]
			writers.Put(w)
		}
	}()
	if err := write(w); err != nil {
		return nil, err
	}
	return append([]byte(nil), w.buf...), nil
}

// ReturnsList says whether a field's value is a list, or a connection or
// page of one (by the schema's naming): the fields whose resolvers get a
// trace span, on either executor.
func ReturnsList(def *ast.FieldDefinition) bool {
	if def == nil {
		return false
	}
	name := def.Type.Name()
	return def.Type.Elem != nil || strings.HasSuffix(name, "Connection") || strings.HasSuffix(name, "Page")
}
