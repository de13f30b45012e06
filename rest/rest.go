// Package rest is the legacy REST contract (spec groups A and B) as a thin
// adapter over the GraphQL API: every endpoint runs one GraphQL operation
// (operations/*.graphql) in-process on the executor that serves /graphql,
// and maps its result to the legacy shape. It never reads the database itself,
// so REST and GraphQL cannot drift apart.
package rest

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/tidwall/gjson"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/requestid"
	"github.com/propertyrecords/inventory/internal/signedpdf"
)

// DefaultBaseURL is where group B is served unless configured otherwise;
// group A keeps its path-style addresses at the root.
const DefaultBaseURL = "/api/v1"

//go:embed operations/*.graphql
var operationFiles embed.FS

//go:embed openapi.json
var openAPIDocument []byte

// API serves the REST endpoints.
type API struct {
	exec    graphql.GraphExecutor
	files   *files.Store
	pdfs    *signedpdf.Renderings
	log     *slog.Logger
	baseURL string
	ops     map[string]string
	openAPI []byte // the document as this server serves it
	// zone is where the reports it renders show times, beside UTC.
	zone *time.Location
}

// New returns the REST adapter over exec, serving files from store (and
// signed PDFs never stored, rendered by pdfs), with group B under baseURL;
// the reports it renders show times in zone beside UTC.
func New(exec graphql.GraphExecutor, store *files.Store, pdfs *signedpdf.Renderings, log *slog.Logger, baseURL string, mode auth.Mode, zone *time.Location) *API {
	baseURL = strings.TrimSuffix(baseURL, "/")
	return &API{exec: exec, files: store, pdfs: pdfs, log: log, baseURL: baseURL, ops: loadOperations(), openAPI: openAPIFor(baseURL, mode), zone: zone}
}

// WriteError answers err in the REST error shape: for a request refused
// before it reached an endpoint (authentication, rate limits).
func (a *API) WriteError(w http.ResponseWriter, r *http.Request, err error) { a.writeError(w, r, err) }

// openAPIFor is the OpenAPI document with group B's paths under baseURL, so
// that it describes the running server (its servers entry is relative).
// Only path keys start with a quote and the default base: descriptions name
// it without one.
//
// With credentials (mode apikey or jwt) its security schemes are those of
// the mode instead of the company header's, on every operation that had
// them, and group B's x-company-id is no longer required.
func openAPIFor(baseURL string, mode auth.Mode) []byte {
	doc := bytes.ReplaceAll(openAPIDocument, []byte(`"`+DefaultBaseURL+`/`), []byte(`"`+baseURL+`/`))
	if mode == auth.Header || mode == "" {
		return doc
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		panic(err) // embedded at build time, and tested
	}
	schemes := map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
		"description": "An API key (inventoryd apikey create) or, in jwt mode, an OpenID Connect access token; it names your company."}}
	required := []any{map[string]any{"bearer": []any{}}}
	if mode == auth.APIKey {
		schemes["apiKeyHeader"] = map[string]any{"type": "apiKey", "in": "header", "name": "X-Api-Key",
			"description": "The API key, for clients that cannot set Authorization."}
		required = append(required, map[string]any{"apiKeyHeader": []any{}})
	}
	d["components"].(map[string]any)["securitySchemes"] = schemes
	for _, item := range d["paths"].(map[string]any) {
		for _, op := range item.(map[string]any) {
			if op, ok := op.(map[string]any); ok && strings.Contains(fmt.Sprint(op["security"]), "companyHeader") {
				op["security"] = required
				// The credential names the company: group B's parameter,
				// required in header mode, may be left out.
				for _, param := range op["parameters"].([]any) {
					if param := param.(map[string]any); param["name"] == "x-company-id" && param["in"] == "query" {
						param["required"] = false
						param["description"] = "Your company: optional, since your credential names it; if sent, it must be that company."
					}
				}
			}
		}
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
}

// loadOperations reads each endpoint's document and appends the fragments
// (files holding only a fragment) that it spreads.
func loadOperations() map[string]string {
	files, err := fs.Glob(operationFiles, "operations/*.graphql")
	if err != nil {
		panic(err)
	}
	docs, fragments := map[string]string{}, map[string]string{}
	for _, f := range files {
		text, err := operationFiles.ReadFile(f)
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(f, "operations/"), ".graphql")
		if strings.Contains(string(text), "\nfragment ") || strings.HasPrefix(string(text), "fragment ") {
			fragments[name] = string(text)
		} else {
			docs[name] = string(text)
		}
	}
	for name, doc := range docs {
		for _, fragment := range fragments {
			if strings.Contains(doc, "..."+fragmentName(fragment)) {
				doc += "\n" + fragment
			}
		}
		docs[name] = doc
	}
	return docs
}

func fragmentName(doc string) string {
	i := strings.Index(doc, "fragment ")
	return strings.Fields(doc[i+len("fragment "):])[0]
}

// Register adds the endpoints to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("/inventory/detail/{inventoryId}", a.get(a.inventoryDetail))
	mux.Handle(files.PDFPath+"{inventoryId}", a.get(a.inventoryPDF))
	mux.Handle("/inventory/download-photos/itemDiagnostic/{id}", a.get(a.itemPhotos))
	mux.Handle(files.PhotoPath+"{reference}", a.get(func(w http.ResponseWriter, r *http.Request, _ *params) error {
		return a.files.ServeSignedPhoto(w, r, r.PathValue("reference"), time.Now())
	}))
	mux.Handle("/property/get_properties/{companyId}", a.get(a.properties))
	mux.Handle("/property/get_property_uuid/{propertyId}", a.get(a.property))
	mux.Handle(a.baseURL+"/inventories", a.get(a.inventories))
	mux.Handle(a.baseURL+"/inventories/details", a.get(a.inventoryDetails))
	mux.Handle(a.baseURL+"/inventories/by-property", a.get(a.inventoriesByProperty))
	mux.Handle(a.baseURL+"/inventories/comparison", a.get(a.inventoryComparison))
	mux.Handle(a.baseURL+"/inventories/comparison/pdf", a.get(a.inventoryComparisonPDF))
	mux.Handle(a.baseURL+"/repairs", a.get(a.repairs))
	mux.Handle("/openapi.json", a.get(func(w http.ResponseWriter, r *http.Request, _ *params) error {
		w.Header().Set("Content-Type", "application/json")
		// The same for everyone and changed only by a new release: caches
		// may keep it, briefly, so that a release's changes reach clients soon.
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, err := w.Write(a.openAPI)
		return err
	}))
}

// NotFound answers paths that name no endpoint, in the REST error shape.
func (a *API) NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.writeError(w, r, apperr.Errorf(apperr.NotFound, "no endpoint at %s", r.URL.Path))
	})
}

// get adapts an endpoint: GET and HEAD only, its query string parsed once
// for its params (a malformed one is a 400: see parseQuery), and its error,
// if any, written in the REST error shape.
func (a *API) get(endpoint func(http.ResponseWriter, *http.Request, *params) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			a.writeError(w, r, apperr.Errorf(apperr.MethodNotAllowed, "%s is not allowed here: use GET", r.Method))
			return
		}
		q, err := parseQuery(r.URL.RawQuery)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if err := endpoint(w, r, &params{r: r, q: q}); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// run executes the named operation with vars and decodes its data into out.
// GraphQL errors come back as the *apperr.Error the presenter saw.
func (a *API) run(ctx context.Context, operation string, vars map[string]any, out any) error {
	data, err := a.runRaw(ctx, operation, vars)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("rest: decoding %s: %w", operation, err)
	}
	return nil
}

// runRaw executes the named operation with vars and returns its data as
// the executor wrote it.
func (a *API) runRaw(ctx context.Context, operation string, vars map[string]any) ([]byte, error) {
	ctx = graphql.StartOperationTrace(ctx)
	params := &graphql.RawParams{Query: a.ops[operation], Variables: vars, ReadTime: graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}}
	opCtx, errs := a.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return nil, refused(operation, errs)
	}
	handler, ctx := a.exec.DispatchOperation(ctx, opCtx)
	res := handler(ctx)
	if len(res.Errors) > 0 {
		return nil, fromGraphQL(res.Errors[0])
	}
	return res.Data, nil
}

// nodeOf runs a document whose root field is node(id: $id) and returns the
// node as GraphQL wrote it. A node of another type reads as not found, like
// a missing one, so an item's id given where an inventory's is expected is
// a 404.
func (a *API) nodeOf(ctx context.Context, operation string, id uuid.UUID, typename, what string) (gjson.Result, error) {
	data, err := a.runRaw(ctx, operation, map[string]any{"id": id.String()})
	if err != nil {
		return gjson.Result{}, err
	}
	found := gjson.GetBytes(data, "node")
	if found.Get("__typename").Str != typename {
		return gjson.Result{}, apperr.Errorf(apperr.NotFound, "%s %s not found", what, id)
	}
	return found, nil
}

// node is nodeOf's node decoded into a T.
func node[T any](ctx context.Context, a *API, operation string, id uuid.UUID, typename, what string) (T, error) {
	var decoded T
	found, err := a.nodeOf(ctx, operation, id, typename, what)
	if err != nil {
		return decoded, err
	}
	if err := json.Unmarshal([]byte(found.Raw), &decoded); err != nil {
		return decoded, fmt.Errorf("rest: decoding %s: %w", operation, err)
	}
	return decoded, nil
}

// refused is the error of an operation refused before it ran: the
// caller's when it says so (over a limit or the caller's budget: the
// request's parameters asked for too much), else ours (an operation of ours
// that does not validate).
func refused(operation string, errs gqlerror.List) error {
	var appErr *apperr.Error
	if errors.As(errs, &appErr) {
		return asParameter(appErr)
	}
	for _, e := range errs {
		if limit, ok := e.Extensions["limit"]; ok {
			return &apperr.Error{Code: apperr.Invalid, Message: fmt.Sprintf("%s (limit %v)", e.Message, limit)}
		}
	}
	return fmt.Errorf("rest: operation %s: %w", operation, errs)
}

// fromGraphQL recovers the service error behind a GraphQL error: in-process,
// the presented error still wraps it.
func fromGraphQL(err *gqlerror.Error) error {
	var appErr *apperr.Error
	if errors.As(err, &appErr) {
		return asParameter(appErr)
	}
	if fmt.Sprint(err.Extensions["code"]) == string(apperr.NotFound) {
		return apperr.Errorf(apperr.NotFound, "not found")
	}
	return err
}

// errorBody is the body of every REST error (see docs/decisions.md).
type errorBody struct {
	Success   bool        `json:"success"`
	Timestamp string      `json:"timestamp"`
	Error     errorDetail `json:"error"`
}

type errorDetail struct {
	Code      apperr.Code `json:"code"`
	Parameter string      `json:"parameter,omitempty"`
	Message   string      `json:"message"`
	// RequestID leads from a client's report to the request's log lines.
	RequestID string `json:"requestId,omitempty"`
}

func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	public, internal := apperr.Public(err)
	if expired, ok := apperr.Expired(r.Context()); ok && internal {
		a.log.InfoContext(r.Context(), "rest: request ended before its answer", "path", r.URL.Path, "code", expired.Code, "err", err)
		public, internal = expired, false
	}
	apperr.SetRetryAfterFor(w.Header(), public)
	switch {
	case internal:
		a.log.ErrorContext(r.Context(), "rest: internal error", "path", r.URL.Path, "err", err)
	case public.Code == apperr.Unavailable:
		// Nothing is wrong with the service or the request: the database is
		// down, restarting or busy, or the blob store refuses writes (full,
		// read-only), and the client should come back. A warning
		// with its cause, for the operator; not an error to page anyone on.
		args := []any{"path", r.URL.Path, "code", public.Code, "err", err}
		if public.Cause != nil {
			args = append(args, "cause", public.Cause)
		}
		a.log.WarnContext(r.Context(), "rest: unavailable", args...)
	}
	writeJSON(w, r, apperr.HTTPStatus(public.Code), errorBody{
		Timestamp: now(),
		Error:     errorDetail{Code: public.Code, Parameter: public.Field, Message: apperr.Cut(public.Message), RequestID: requestid.From(r.Context())},
	})
}

// writeJSON writes body as json.Encoder would (HTML characters escaped,
// ended by a newline), in one write (internal/onewrite).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, body any) {
	encoded, err := json.Marshal(body)
	if err != nil { // a value of ours that JSON cannot hold, never a client's doing
		status = http.StatusInternalServerError
		encoded, _ = json.Marshal(errorBody{Timestamp: now(), Error: errorDetail{Code: apperr.Internal,
			Message: "the answer could not be written", RequestID: requestid.From(r.Context())}})
	}
	writeRaw(w, r, status, encoded)
}

// now is the envelope timestamp.
// In milliseconds: nine fractional digits are valid RFC 3339, but common
// parsers (Python's %f, several JSON date libraries) refuse more than six.
func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00") }
