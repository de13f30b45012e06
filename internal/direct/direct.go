// Package direct is the runtime of the direct executor: code generated from
// the GraphQL schema (by package directgen, into graph/direct_generated.go)
// that runs a query's fields one after another on one goroutine and writes
// the answer's JSON as it goes, instead of gqlgen's per-field machinery (a
// field context, closures and a marshaler per field, a goroutine per list
// element and per field bound to a method with a context).
//
// It answers what gqlgen would answer, byte for byte. A root field whose
// resolver fails is answered as gqlgen answers it (RootError): its error, and
// null. On anything else that goes wrong (an error below the root, a null in a
// non-null field, a panic, @defer, or a field it was not generated for) it
// gives up (ErrFallback) and the operation runs again on gqlgen's executor,
// which writes the errors. Queries only read, so running one again is safe;
// the root fields' resolvers read the whole tree (entgql's eager loads), so
// the errors of reads are theirs, and a failing read runs once.
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

// ErrFallback is returned when the direct executor gives an operation up to
// gqlgen's: as it is, or (a resolver's failure) as an error that Is it and
// unwraps to the resolver's error (Failed).
var ErrFallback = errors.New("direct: run the operation on gqlgen's executor")

// Failed is what the generated code returns when a field's resolver fails
// with err: the operation is given up to gqlgen's executor, as any other
// fallback is, and the caller can tell why. Some failures no second run
// mends (the database is unavailable): answered at once, they cost the
// client no second wait.
func Failed(err error) error { return &failure{err: err} }

type failure struct{ err error }

func (f *failure) Error() string        { return ErrFallback.Error() + ": " + f.err.Error() }
func (f *failure) Is(target error) bool { return target == ErrFallback }
func (f *failure) Unwrap() error        { return f.err }

// ErrNull is returned when a non-null root field failed: the answer's data
// is null, as gqlgen's executor makes it, and its errors say why.
var ErrNull = errors.New("direct: the answer's data is null")

// RootError answers a root field whose resolver failed with err as gqlgen's
// executor does (graphql.ResolveField): the error is added to the answer at
// the field's path and location (ctx is the field's), and the field is null.
// (A non-null one nulls the whole data once every root field has run, as
// gqlgen's does: the generated code says ErrNull then.) An outage
// (UNAVAILABLE) is given up instead (Failed), which the executor answers as
// one: no data.
func RootError(ctx context.Context, w *Writer, err error) error {
	if apperr.CodeOf(err) == apperr.Unavailable {
		return Failed(err)
	}
	graphql.AddError(ctx, graphql.AddFieldLocationToError(ctx, err))
	w.Null()
	return nil
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

// NewContexts makes field contexts for an operation with these variables.
func NewContexts(vars map[string]any) *Contexts {
	return &Contexts{vars: vars, args: map[*ast.Field]map[string]any{}, made: map[contextKey]contextOf{}}
}

// Of returns the context of field of an object, below parent. parse is
// gqlgen's argument parser of the field, nil when it takes none.
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
				return nil, nil, ErrFallback
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
