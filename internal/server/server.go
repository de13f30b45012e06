// Package server routes the service's HTTP endpoints.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/rest"
)

// Options are the handler's settings.
type Options struct {
	// IDECompany is the company whose X-Company-Id the IDE opens with.
	IDECompany uuid.UUID
	// RESTBaseURL is the path prefix of the REST group B endpoints.
	RESTBaseURL string
	// Files is the store of signed PDFs and photos.
	Files *files.Store
	// PublicURL, when set, starts every download URL; else the request's scheme and host do.
	PublicURL string
	// RequestTimeout is every request's deadline (DefaultRequestTimeout when 0).
	RequestTimeout time.Duration
}

// DefaultRequestTimeout is the deadline of a request: generous for reads
// whose price the cost check bounds, short enough that a stuck one does not
// hold a connection for long.
const DefaultRequestTimeout = 10 * time.Second

// Handler serves GraphQL at /graphql, the legacy REST endpoints and their
// OpenAPI document, the IDE at /, /healthz (the process is up) and /readyz
// (the database answers).
func Handler(st *store.Store, log *slog.Logger, opts Options) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", ide.Page("/graphql", opts.IDECompany))
	mux.Handle("GET /ide/", ide.Assets())
	exec := graph.NewExecutor(st.Client, st, opts.Files, log)
	mux.Handle("/graphql", withCompany(graph.Handler(exec)))
	api := rest.New(exec, opts.Files, log, opts.RESTBaseURL)
	api.Register(mux)
	mux.Handle("/", api.NotFound())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := st.Ping(ctx); err != nil {
			log.WarnContext(ctx, "readyz: database unreachable", "err", err)
			writeStatus(w, http.StatusServiceUnavailable, "database unreachable")
			return
		}
		writeStatus(w, http.StatusOK, "ok")
	})
	timeout := opts.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return logRequests(log, withDeadline(timeout, withBaseURL(opts.PublicURL, mux)))
}

// withDeadline gives each request its deadline. Everything the request does,
// its SQL statements included, runs under it and is cancelled when it passes
// or when the client goes away (net/http cancels the request's context then).
func withDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withBaseURL records the base of the download URLs given in this request's answers.
func withBaseURL(public string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(files.WithBaseURL(r.Context(), files.RequestBaseURL(r, public))))
	})
}

// withCompany scopes each request to the company its X-Company-Id header names.
func withCompany(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(tenant.FromHeader(r.Context(), r.Header.Get(tenant.Header))))
	})
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(`{"status":"` + status + `"}`))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		log.DebugContext(r.Context(), "http request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration", time.Since(start))
	})
}
