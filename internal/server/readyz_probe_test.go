package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A probe that gives up before the database answers (its own timeout, or a
// probe queued while the server was starting, handled once it serves) is
// not a dead database: nothing is logged as one.
func TestAProbeThatGaveUpIsNotADeadDatabase(t *testing.T) {
	st := testdb.Open(t)
	logs := &apitest.LogBuffer{}
	handler := server.Handler(st, logs.Logger(slog.LevelInfo), server.Options{Files: apitest.Files(t)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/readyz", nil).WithContext(ctx))
	if strings.Contains(logs.String(), "unreachable") {
		t.Errorf("a probe that gave up was logged as the database unreachable:\n%s", logs)
	}
	// A probe that waits is answered, as ever.
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/readyz: %d %s, want 200", rec.Code, rec.Body)
	}
}
