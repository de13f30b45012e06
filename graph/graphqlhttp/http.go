// Package graphqlhttp serves the service's GraphQL executor over HTTP
// (/graphql): POST, GET, multipart uploads, @defer's multipart/mixed parts,
// and the bounds of each (a body's size, a photo's, CSRF prevention), with
// the statuses GraphQL over HTTP gives. The executor it serves is graph's
// (graph.NewExecutor), which installs this package's TransportCheck: so
// this package reaches the executor through an interface (Executor) and
// does not import graph.
package graphqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/tidwall/gjson"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/onewrite"
	"github.com/propertyrecords/inventory/internal/requestid"
)

// MaxRequestBytes bounds a request body: operations are small, and a client
// must not make the server hold an unbounded body in memory.
const MaxRequestBytes = 1 << 20

// transports are gqlgen's ways to send operations that /graphql accepts
// besides POST (served by post): GET, and OPTIONS for CORS preflights.
var transports = []graphql.Transport{transport.Options{}, transport.GET{}}

// incremental serves POSTs that accept multipart/mixed: the parts of an
// operation with @defer, each as it is ready.
var incremental = transport.MultipartMixed{Boundary: "-"}

// Executor is what Handler runs operations on: graph's *Executor.
type Executor interface {
	graphql.GraphExecutor
	// PresentRecoveredError presents a panic recovered while serving.
	PresentRecoveredError(ctx context.Context, err any) error
	// WriteError answers a request refused before it reached GraphQL, as a
	// GraphQL error presented, logged and counted as an operation's are.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
	// MaxPhotoBytes bounds a photo addItemPhoto takes: a multipart
	// request may be that and MaxRequestBytes more.
	MaxPhotoBytes() int64
}

// Handler serves exec over HTTP. It does what gqlgen's handler.Server does,
// which cannot be given an executor of our own to share with REST.
func Handler(exec Executor) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				WriteGraphQLError(w, http.StatusInternalServerError, exec.PresentRecoveredError(r.Context(), p))
			}
		}()
		ctx, refused := answeredOnce(graphql.StartOperationTrace(r.Context()), r.Method == http.MethodGet)
		r, w = r.WithContext(ctx), &refusalWriter{ResponseWriter: w, refused: refused}
		if uploads.Supports(r) {
			serveUpload(w, r, exec)
			return
		}
		if r.ContentLength > MaxRequestBytes {
			WriteGraphQLError(w, http.StatusRequestEntityTooLarge, bodyTooLarge())
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes) // bodies of unknown length too
		if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "multipart/mixed") {
			// urql sends queries with GET by default (preferGetMethod), @defer
			// too: the same parts, the operation read from the URL.
			post, err := getAsPost(r)
			if err != nil {
				WriteGraphQLError(w, http.StatusBadRequest, err)
				return
			}
			r = post
		}
		if incremental.Supports(r) {
			incremental.Do(w, r.WithContext(withIncrementalDelivery(r.Context())), retryingExecutor{Executor: exec, header: w.Header()})
			return
		}
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) && r.Header.Get("Upgrade") == "" {
			post(w, r, exec)
			return
		}
		for _, t := range transports {
			if t.Supports(r) {
				out := &outageWriter{ResponseWriter: w}
				t.Do(out, r, retryingExecutor{Executor: exec, header: w.Header(), outage: out})
				return
			}
		}
		WriteGraphQLError(w, http.StatusBadRequest, badRequest("send operations with GET or POST (application/json)"))
	})
}

// uploads serves the GraphQL multipart request spec (addItemPhoto's file);
// serveUpload gives it its bounds.
var uploads = transport.MultipartForm{}

// uploadMemory is what a multipart request keeps in memory: its parts
// beyond it go to a temporary file that gqlgen removes after the request,
// so a phone's photo is not held in memory while it streams to the store.
const uploadMemory = 1 << 20

// serveUpload serves a multipart/form-data request. Browsers send that
// content type across origins without a CORS preflight (it is "simple"),
// with the user's cookies, so as Apollo Server's CSRF prevention does the
// request must carry a header no form can set, which makes a browser ask
// first: apollo-require-preflight (apollo-upload-client's setting) or
// x-apollo-operation-name (Apollo's and urql's clients send it). Its body
// is bounded by a photo and an operation.
func serveUpload(w http.ResponseWriter, r *http.Request, exec Executor) {
	if r.Header.Get("Apollo-Require-Preflight") == "" && r.Header.Get("X-Apollo-Operation-Name") == "" {
		exec.WriteError(w, r, apperr.Errorf(apperr.Invalid, "a multipart/form-data request must carry an apollo-require-preflight or x-apollo-operation-name header (CSRF prevention: a cross-origin form cannot set one)"))
		return
	}
	bound := exec.MaxPhotoBytes() + MaxRequestBytes
	if r.ContentLength > bound {
		w.Header().Set("Content-Type", "application/json")
		WriteGraphQLError(w, http.StatusRequestEntityTooLarge, &gqlerror.Error{
			Message:    fmt.Sprintf("the request body is over %d bytes: a photo is at most %d", bound, exec.MaxPhotoBytes()),
			Extensions: map[string]any{"code": string(apperr.Invalid), "field": "file"}})
		return
	}
	if err := boundFormFields(r); err != nil {
		WriteGraphQLError(w, http.StatusRequestEntityTooLarge, err)
		return
	}
	t := uploads
	t.MaxUploadSize, t.MaxMemory = bound, uploadMemory
	out := &outageWriter{ResponseWriter: w}
	t.Do(out, r, retryingExecutor{Executor: exec, header: w.Header(), outage: out})
}

// boundFormFields holds the operations and map parts of a multipart request
// to MaxRequestBytes together, as a JSON body is held: gqlgen's transport
// reads them whole, bounded only by the request's size (a photo's), so a 20
// MB operation passed. Only file parts may be larger. The parts are read
// here, and the body then replayed to the transport from what was read and
// what was not, byte for byte. A body that is not multipart as the spec
// lays it out is left to the transport to refuse.
func boundFormFields(r *http.Request) *gqlerror.Error {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil
	}
	var read bytes.Buffer
	form := multipart.NewReader(io.TeeReader(r.Body, &read), params["boundary"])
	left := int64(MaxRequestBytes)
	for _, name := range []string{"operations", "map"} {
		part, err := form.NextPart()
		if err != nil || part.FormName() != name {
			break
		}
		n, err := io.Copy(io.Discard, io.LimitReader(part, left+1))
		if left -= n; left < 0 {
			tooLarge := gqlerror.Errorf("the %s part of the multipart request is over what a request's operations may be (%d bytes with the operations and map parts together): only file parts may be larger", name, MaxRequestBytes)
			tooLarge.Extensions = map[string]any{"code": string(apperr.QueryTooLarge), "limit": MaxRequestBytes, "field": name}
			return tooLarge
		}
		if err != nil {
			break
		}
	}
	r.Body = replayedBody{Reader: io.MultiReader(bytes.NewReader(read.Bytes()), r.Body), Closer: r.Body}
	return nil
}

// replayedBody is a request body read again from its start.
type replayedBody struct {
	io.Reader
	io.Closer
}

func isJSON(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// post serves an operation sent with POST, as gqlgen's POST transport does
// but for two things: an answer's data, JSON already, is written as it is
// rather than checked and compacted again by encoding/json (a tenth of the
// server's time on a nested tree), and a body that does not read or decode is
// not echoed back to its sender, nor is the network error that stopped it.
func post(w http.ResponseWriter, r *http.Request, exec Executor) {
	start := graphql.Now()
	contentType := responseContentType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	var params graphql.RawParams
	raw, status, err := readBody(r.Body)
	if err == nil {
		status, err = http.StatusBadRequest, decodeParams(raw, &params)
	}
	if err != nil {
		w.WriteHeader(status)
		writeRequestErrors(w, exec.DispatchError(r.Context(), gqlerror.List{err}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	opCtx, errs := exec.CreateOperationContext(r.Context(), &params)
	if errs != nil {
		status := requestErrorStatus(contentType, errs)
		if rateLimited(w.Header(), errs) {
			status = http.StatusTooManyRequests
		}
		w.WriteHeader(status)
		writeRequestErrors(w, exec.DispatchError(graphql.WithOperationContext(r.Context(), opCtx), errs))
		return
	}
	responses, ctx := exec.DispatchOperation(r.Context(), opCtx)
	res := responses(ctx)
	setRetryAfter(w.Header(), res)
	if outage(res) {
		w.WriteHeader(http.StatusServiceUnavailable)
		writeRequestErrors(w, res)
	} else {
		_ = onewrite.Answer(w, r, http.StatusOK, responseParts(res)...)
	}
}

// outage reports whether res answers an operation that an outage (the
// database's, or a blob store that refuses writes) left with nothing to
// answer: no data, or none but nulls at its root (a mutation whose one
// field failed), and every error UNAVAILABLE. Such an answer is a 503
// without a data entry, whatever the media type (docs/decisions.md,
// "Operations as documented"): the request
// could not be served now and is to be sent again whole, which load
// balancers, proxies and clients' retry policies read from the status. An
// answer with data, even partial, stays a 200 (GraphQL over HTTP requires
// it under application/graphql-response+json), with Retry-After.
func outage(res *graphql.Response) bool {
	if res == nil || len(res.Errors) == 0 || !nothingAnswered(res.Data) {
		return false
	}
	for _, e := range res.Errors {
		if CodeOf(e) != apperr.Unavailable {
			return false
		}
	}
	return true
}

// nothingAnswered reports whether data holds no answer: none, null, or an
// object whose every member is null.
func nothingAnswered(data json.RawMessage) bool {
	if len(data) == 0 || string(data) == "null" {
		return true
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return false
	}
	empty := true
	root.ForEach(func(_, v gjson.Result) bool {
		empty = v.Type == gjson.Null
		return empty
	})
	return empty
}

// readBody reads a request body. A failure is the client's (it sent too
// much, too slowly, or not all of it): the error says which, in the client's
// terms, with the status that goes with it, and never carries the network
// error, whose text has the connection's addresses.
func readBody(body io.Reader) ([]byte, int, *gqlerror.Error) {
	raw, err := io.ReadAll(body)
	if err == nil {
		return raw, http.StatusOK, nil
	}
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		return nil, http.StatusRequestEntityTooLarge, bodyTooLarge()
	}
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr.Timeout() {
		return nil, http.StatusRequestTimeout, badRequest("the request body was not received in time: send it whole, without pauses")
	}
	return nil, http.StatusBadRequest, badRequest("the request body was not received in full")
}

// decodeParams decodes a GraphQL request. An error tells where the body goes
// wrong, and how, in a few words whatever the body's size: encoding/json's
// messages quote at most a character of it.
func decodeParams(raw []byte, params *graphql.RawParams) *gqlerror.Error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // variables keep their numbers exact, as gqlgen's transports do
	err := dec.Decode(params)
	if err == nil {
		rest := raw[dec.InputOffset():]
		if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
			return notJSON(raw, len(raw)-len(trimmed)+1, "data after the request's JSON object")
		}
		// A request names its operation's document, or a persisted one by
		// its hash; one with neither ({"qeury": …}) is not a GraphQL request.
		if params.Query == "" && params.Extensions["persistedQuery"] == nil {
			return badRequest(`the request has no "query": send the operation's document in it`)
		}
		return nil
	}
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntaxErr):
		return notJSON(raw, int(syntaxErr.Offset), syntaxErr.Error())
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return notJSON(raw, int(typeErr.Offset), "a GraphQL request is a JSON object, not "+typeErr.Value)
	case errors.As(err, &typeErr):
		return notJSON(raw, int(typeErr.Offset), fmt.Sprintf("%q must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value))
	case errors.Is(err, io.EOF):
		return badRequest("the request body is empty: send a JSON GraphQL request")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return notJSON(raw, len(raw), "the body ends before its JSON does")
	}
	return badRequest("the request body is not a JSON GraphQL request")
}

// notJSON says what is wrong at byte pos (from 1) of body, and on which line
// and column (in bytes), which editors show.
func notJSON(body []byte, pos int, what string) *gqlerror.Error {
	pos = min(max(pos, 1), len(body))
	before := body[:max(pos-1, 0)]
	line := 1 + bytes.Count(before, []byte{'\n'})
	column := len(before) - bytes.LastIndexByte(before, '\n')
	return badRequest("the request body is not a valid JSON GraphQL request at byte %d (line %d, column %d): %s", pos, line, column, what)
}

// jsonKind names the JSON kind of the values a field of graphql.RawParams takes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another kind"
}

// setRetryAfter tells a client whose operation failed because the database
// could not answer (code UNAVAILABLE) when to try again. The status stays
// what GraphQL over HTTP gives: the answer may hold data of other fields.
func setRetryAfter(h http.Header, res *graphql.Response) {
	if res == nil {
		return
	}
	for _, e := range res.Errors {
		var code string
		switch c := e.Extensions["code"].(type) {
		case apperr.Code:
			code = string(c)
		case string:
			code = c
		}
		if code == string(apperr.Unavailable) {
			apperr.SetRetryAfter(h)
			return
		}
	}
}

// rateLimited reports whether errs refuse the operation for its caller's
// budget (the cost check), and sets when to retry. The answer is then a 429,
// as a refusal by the request rate is: the request was sound, and will be
// served later.
func rateLimited(h http.Header, errs gqlerror.List) bool {
	for _, e := range errs {
		if CodeOf(e) == apperr.RateLimited && apperr.SetRetryAfterFor(h, e) {
			return true
		}
	}
	return false
}

// retryingExecutor is the executor as gqlgen's GET transport sees it: its
// answers set Retry-After as post's do, before the transport writes them,
// and an outage's answer is written as post writes it (to outage, when set).
type retryingExecutor struct {
	Executor
	header http.Header
	outage *outageWriter
}

// CreateOperationContext sets Retry-After on a refusal for the caller's
// budget; gqlgen's transport writes the answer, with its own status.
func (e retryingExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	opCtx, errs := e.Executor.CreateOperationContext(ctx, params)
	rateLimited(e.header, errs)
	return opCtx, errs
}

func (e retryingExecutor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	responses, ctx := e.Executor.DispatchOperation(ctx, opCtx)
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		setRetryAfter(e.header, res)
		if e.outage != nil && outage(res) {
			e.outage.answer(res)
		}
		return res
	}, ctx
}

// outageWriter is the writer of an answer that gqlgen's transport writes,
// unless an outage's answer was written first (its status is not one the
// transport would give), after which what the transport writes is dropped.
type outageWriter struct {
	http.ResponseWriter
	answered bool
}

func (w *outageWriter) answer(res *graphql.Response) {
	w.ResponseWriter.WriteHeader(http.StatusServiceUnavailable)
	writeRequestErrors(w.ResponseWriter, res)
	w.answered = true
}

func (w *outageWriter) WriteHeader(code int) {
	if !w.answered {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *outageWriter) Write(b []byte) (int, error) {
	if w.answered {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (w *outageWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// responseContentType is the media type of the answer the client accepts,
// chosen as gqlgen's transports choose it.
func responseContentType(accept string) string {
	const (
		graphQLResponse = "application/graphql-response+json"
		plainJSON       = "application/json"
	)
	if accept == "" {
		return plainJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", plainJSON:
			return plainJSON
		case graphQLResponse:
			return graphQLResponse
		}
	}
	return graphQLResponse
}

// requestErrorStatus is the status of a request refused before it ran, as
// gqlgen's transports give it: parse, validation and limit errors are the
// client's (422, or 400 for application/graphql-response+json); others 200.
func requestErrorStatus(contentType string, errs gqlerror.List) int {
	if errcode.GetErrorKind(errs) == errcode.KindProtocol && contentType == "application/graphql-response+json" {
		return http.StatusBadRequest
	}
	// GraphQL over HTTP: under application/json, a well-formed request is
	// answered 200 whatever its document's errors (gqlgen answered 422).
	return http.StatusOK
}

// responseParts is res as encoding/json would write it, with the data of an
// answer without errors as it is, in parts to be written one after another.
func responseParts(res *graphql.Response) [][]byte {
	if res != nil && len(res.Data) > 0 && len(res.Errors) == 0 &&
		res.Label == "" && res.Path == nil && res.HasNext == nil {
		if res.Extensions != nil {
			if ext, err := json.Marshal(res.Extensions); err == nil {
				return [][]byte{dataOpening, res.Data, extensionsOpening, ext, closing}
			}
		}
		return [][]byte{dataOpening, res.Data, closing}
	}
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(&graphql.Response{Errors: gqlerror.List{gqlerror.Errorf("internal error")}})
	}
	return [][]byte{b}
}

var (
	dataOpening       = []byte(`{"data":`)
	extensionsOpening = []byte(`,"extensions":`)
	closing           = []byte(`}`)
)

// writeRequestErrors writes the answer to a request that failed before its
// operation ran (a document that does not parse or validate, variables that
// do not coerce): its errors, and no data entry, which the GraphQL spec
// gives only to an operation that ran (encoding/json wrote "data": null).
func writeRequestErrors(w io.Writer, res *graphql.Response) {
	b, err := json.Marshal(struct {
		Errors     gqlerror.List  `json:"errors"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}{res.Errors, res.Extensions})
	if err != nil {
		b = []byte(`{"errors":[{"message":"internal error"}]}`)
	}
	_, _ = w.Write(b)
}

// CodeOf is err's extensions.code, as graph's error presenter and the
// transport read it: an apperr.Code from the presenter, a string from
// gqlgen's and entgql's own errors, "" when it has none.
func CodeOf(err *gqlerror.Error) apperr.Code {
	switch code := err.Extensions["code"].(type) {
	case apperr.Code:
		return code
	case string:
		return apperr.Code(code)
	}
	return ""
}

// WriteGraphQLError writes err, a presented error (anything else is an
// internal error), as the one error of a request refused with status, and
// the request's id in it.
func WriteGraphQLError(w http.ResponseWriter, status int, err error) {
	gqlErr, ok := err.(*gqlerror.Error)
	if !ok {
		gqlErr = gqlerror.Errorf("internal error")
	}
	if id := w.Header().Get(requestid.Header); id != "" {
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		gqlErr.Extensions["requestId"] = id
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeRequestErrors(w, &graphql.Response{Errors: gqlerror.List{gqlErr}})
}

// BadRequest is the code of a request the transport refuses before any
// GraphQL is read: no JSON, no query, a method or media type not served.
const BadRequest = string(apperr.BadRequest)

// badRequest is a transport's refusal, with its code: every error a client
// gets has one to switch on.
func badRequest(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": BadRequest}
	return err
}

// bodyTooLarge refuses a body over MaxRequestBytes as the query limits
// refuse a document over theirs.
func bodyTooLarge() *gqlerror.Error {
	err := gqlerror.Errorf("the request body is over %d bytes", MaxRequestBytes)
	err.Extensions = map[string]any{"code": string(apperr.QueryTooLarge), "limit": MaxRequestBytes}
	return err
}

// getAsPost is a GET's operation as the JSON POST that asks for the same
// (query, operationName, variables, extensions from the URL), whose context
// keeps the GET's mark: it runs queries only, as a GET does.
func getAsPost(r *http.Request) (*http.Request, *gqlerror.Error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("the URL's query string does not parse: %v", err)
	}
	params := map[string]any{"query": values.Get("query"), "operationName": values.Get("operationName")}
	for _, key := range []string{"variables", "extensions"} {
		if raw := values.Get(key); raw != "" {
			if !json.Valid([]byte(raw)) {
				return nil, badRequest("%s in the URL is not JSON", key)
			}
			params[key] = json.RawMessage(raw)
		}
	}
	body, _ := json.Marshal(params)
	if len(body) > MaxRequestBytes {
		return nil, bodyTooLarge()
	}
	post := r.Clone(r.Context()) // still marked as a GET's (answeredOnce)
	post.Method, post.Body, post.ContentLength = http.MethodPost, io.NopCloser(bytes.NewReader(body)), int64(len(body))
	post.Header.Set("Content-Type", "application/json")
	return post, nil
}

// queriesOnlyKey marks an operation sent with GET: it may only read.
type queriesOnlyKey struct{}

// answeredOnceKey marks an operation whose request ends with its answer (or
// its @defer parts): every request this package serves. A subscription's
// events come over the live transports instead, which internal/server
// serves before this package sees the request.
type answeredOnceKey struct{}

// howToSubscribe is what a refused subscription is told.
const howToSubscribe = "subscribe over a WebSocket at /graphql with graphql-ws (the graphql-transport-ws protocol), " +
	"or POST the subscription with Accept: text/event-stream (GraphQL over SSE, as graphql-sse sends it)"

// refusal is the status TransportCheck gives the request whose operation
// it refused (0 while it has not), for refusalWriter.
type refusal struct{ status int }

type refusalKey struct{}

// answeredOnce marks ctx as a request's that this package answers once
// (answeredOnceKey), and a GET's (queriesOnlyKey) when get, with the
// refusal its operation may meet.
func answeredOnce(ctx context.Context, get bool) (context.Context, *refusal) {
	refused := &refusal{}
	ctx = context.WithValue(context.WithValue(ctx, answeredOnceKey{}, true), refusalKey{}, refused)
	if get {
		ctx = context.WithValue(ctx, queriesOnlyKey{}, true)
	}
	return ctx, refused
}

// refuseWith gives the request of ctx status, as TransportCheck refuses its
// operation.
func refuseWith(ctx context.Context, status int) {
	if r, ok := ctx.Value(refusalKey{}).(*refusal); ok {
		r.status = status
	}
}

// refusalWriter writes the answer of a request whose operation
// TransportCheck refused with the status it gave (405 with Allow: POST for
// a mutation or subscription sent with GET): gqlgen's transports, which
// write the answer, give any refused operation 200, 406 or 422, which tell
// a client nothing of what to change.
type refusalWriter struct {
	http.ResponseWriter
	refused *refusal
	wrote   bool
}

func (w *refusalWriter) WriteHeader(code int) {
	if !w.wrote && w.refused.status != 0 {
		code = w.refused.status
		if code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
	}
	w.wrote = w.wrote || code >= 200
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is written so far: answers in parts (@defer) need it.
func (w *refusalWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
