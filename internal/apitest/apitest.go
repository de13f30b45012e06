// Package apitest drives the real HTTP handler in tests, through httptest.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/onewrite"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/rest"
)

// Server is the service's handler on a real loopback HTTP server.
type Server struct {
	URL string
}

// SigningKey signs the photo URLs of Files' stores: known, so that tests can
// forge a valid signature and show what a signature alone does not allow.
const SigningKey = "test signing key, 32 bytes long!"

// Files is an in-memory file store for one test.
func Files(tb testing.TB) *files.Store {
	tb.Helper()
	fs, err := files.Open(context.Background(), files.Options{URL: "mem://", SigningKey: []byte(SigningKey)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { fs.Close() })
	return fs
}

// NewServer serves st and fs (a fresh in-memory store when nil) for the
// duration of the test.
func NewServer(tb testing.TB, st *store.Store, fs *files.Store) *Server {
	tb.Helper()
	if fs == nil {
		fs = Files(tb)
	}
	return NewServerWith(tb, st, server.Options{Files: fs})
}

// NewServerWith serves st with opts (the REST base URL defaulted) for the
// duration of the test.
func NewServerWith(tb testing.TB, st *store.Store, opts server.Options) *Server {
	tb.Helper()
	return NewServerLogging(tb, st, opts, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// NewServerLogging is NewServerWith writing its log to log.
func NewServerLogging(tb testing.TB, st *store.Store, opts server.Options, log *slog.Logger) *Server {
	tb.Helper()
	if opts.RESTBaseURL == "" {
		opts.RESTBaseURL = rest.DefaultBaseURL
	}
	srv := httptest.NewUnstartedServer(server.Handler(st, log, opts))
	// As cmd/inventoryd serves (internal/onewrite).
	srv.Listener = onewrite.Listen(srv.Listener)
	onewrite.Serve(srv.Config)
	srv.Start()
	tb.Cleanup(srv.Close)
	return &Server{URL: srv.URL}
}

// Response is a GraphQL response.
type Response struct {
	Data       json.RawMessage `json:"data"`
	Errors     []Error         `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
}

// Error is a GraphQL error.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e Error) Code() string { s, _ := e.Extensions["code"].(string); return s }

// GraphQL posts query with vars as company (no header when company is empty)
// and returns the response, failing the test on a transport error.
func (s *Server) GraphQL(tb testing.TB, company, query string, vars map[string]any) Response {
	tb.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		tb.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if company != "" {
		req.Header.Set("X-Company-Id", company)
	}
	res, raw := do(tb, req)
	var out Response
	if err := json.Unmarshal(raw, &out); err != nil {
		tb.Fatalf("decoding GraphQL response (HTTP %d): %v\n%s", res.StatusCode, err, raw)
	}
	return out
}

// MustData is GraphQL that fails the test on any GraphQL error and decodes
// data into out.
func (s *Server) MustData(tb testing.TB, company, query string, vars map[string]any, out any) {
	tb.Helper()
	res := s.GraphQL(tb, company, query, vars)
	if len(res.Errors) > 0 {
		tb.Fatalf("GraphQL errors: %+v", res.Errors)
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		tb.Fatalf("decoding data: %v\n%s", err, res.Data)
	}
}

// Get fetches path and returns the response with its body read.
func (s *Server) Get(tb testing.TB, path string, header http.Header) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return do(tb, req)
}

func do(tb testing.TB, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, body
}

// LogBuffer holds the lines a server logs, for a test to read: handlers
// write from their own goroutines while the test reads, hence the lock.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger is a JSON logger into b that keeps lines from level up.
func (b *LogBuffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}))
}

// ErrorLines are the lines logged at ERROR.
func (b *LogBuffer) ErrorLines() []string {
	var out []string
	for line := range strings.Lines(b.String()) {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return out
}

// Take returns the lines written since the last Take, decoded, and forgets them.
func (b *LogBuffer) Take(tb testing.TB) []map[string]any {
	tb.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var lines []map[string]any
	for _, raw := range bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal(raw, &line); err != nil {
			tb.Fatalf("log line %s: %v", raw, err)
		}
		lines = append(lines, line)
	}
	b.buf.Reset()
	return lines
}
