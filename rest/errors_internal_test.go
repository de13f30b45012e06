package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/auth"
)

// An Unavailable error carrying the driver's failure, as the store makes one
// when PostgreSQL goes away mid-request (which a test cannot time reliably:
// database/sql retries on a fresh connection): the client is told to retry,
// the operator gets a warning with the cause, and the cause stays in the log.
func TestWriteErrorTellsWhenToRetryAndWarnsWithTheCause(t *testing.T) {
	var logs bytes.Buffer
	a := New(nil, nil, nil, slog.New(slog.NewJSONHandler(&logs, nil)), DefaultBaseURL, auth.Header, nil)
	cause := errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")
	failing := func(err error) http.Handler {
		return a.get(func(http.ResponseWriter, *http.Request, *params) error { return err })
	}
	rec := httptest.NewRecorder()
	unavailable := &apperr.Error{Code: apperr.Unavailable, Message: "the database is unavailable: try again shortly", Cause: cause}
	failing(fmt.Errorf("rest: operation b1: %w", unavailable)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/inventories", nil))

	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusServiceUnavailable ||
		body.Error.Code != apperr.Unavailable || rec.Header().Get("Retry-After") != "2" {
		t.Errorf("got %d %s, Retry-After %q; want 503 UNAVAILABLE with Retry-After 2", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	if strings.Contains(rec.Body.String(), "57P01") {
		t.Errorf("the cause reached the client: %s", rec.Body)
	}
	var line struct{ Level, Msg, Cause, Path string }
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil || line.Level != "WARN" || line.Cause != cause.Error() || line.Path != "/api/v1/inventories" {
		t.Errorf("log: got %s, want one WARN line with the path and the cause", logs.Bytes())
	}

	// An internal error is still an error, and promises nothing.
	logs.Reset()
	rec = httptest.NewRecorder()
	failing(errors.New("pq: syntax error")).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/inventories", nil))
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Retry-After") != "" || !strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("internal error: got %d, Retry-After %q, log %s; want 500 without Retry-After, logged as an error", rec.Code, rec.Header().Get("Retry-After"), logs.Bytes())
	}
}

func TestParseQueryNamesTheMalformedPair(t *testing.T) {
	for _, tt := range []struct {
		raw, parameter, where string // where: text the message must hold
	}{
		{"x-company-id=11111111-1111-1111-1111-111111111111;", "x-company-id", "byte 1"},
		{"page=1&x-company-id=%zz", "x-company-id", "byte 8"},
		{"page=1&sorter=asc;x-company-id=x", "sorter", "byte 8"},
		{"page=%", "page", "byte 1"},
		{"%78-company-id=%2", "x-company-id", "byte 1"}, // the key is read as escaped
		{"page=1&x-company-id%zz=1", "", "byte 8"},      // the key cannot be told: where it is
		{"a;b=1", "", "byte 1"},
		{"page=1&" + strings.Repeat("k", 500) + "=%zz", strings.Repeat("k", 64) + "…", "byte 8"},
	} {
		_, err := parseQuery(tt.raw)
		e, ok := errors.AsType[*apperr.Error](err)
		if !ok || e.Code != apperr.Invalid || e.Field != tt.parameter || !strings.Contains(e.Message, tt.where) {
			t.Errorf("%q: got %#v, want INVALID_ARGUMENT on %q saying %q", tt.raw, err, tt.parameter, tt.where)
		}
	}
	// What url.ParseQuery reads, this reads the same.
	for _, raw := range []string{"", "a=1", "a=1&a=2&b", "a=%20+x&&b=%C3%A9", "x-company-id=" + strings.Repeat("9", 500), "&", "=1"} {
		got, err := parseQuery(raw)
		want, wantErr := url.ParseQuery(raw)
		if err != nil || wantErr != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: got %v %v, want %v", raw, got, err, want)
		}
	}
}
