package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// TestUnavailableIsLoggedAtWarnWithItsCause: the presenter shows the client
// the service's message only, and logs what the database said at WARN (an
// outage to watch, not a bug), where it was logged at no level at all.
func TestUnavailableIsLoggedAtWarnWithItsCause(t *testing.T) {
	var logs strings.Builder
	present := presentError(slog.New(slog.NewJSONHandler(&logs, nil)))
	cause := errors.New("dial tcp 10.1.2.3:5432: connect: connection refused")
	err := &apperr.Error{Code: apperr.Unavailable, Message: "the database is unavailable: try again shortly", Cause: cause}

	got := present(context.Background(), fmt.Errorf("loading inventories: %w", err))
	if got.Extensions["code"] != apperr.Unavailable || got.Message != err.Message {
		t.Errorf("presented %q %v, want %q UNAVAILABLE", got.Message, got.Extensions, err.Message)
	}
	line := logs.String()
	if !strings.Contains(line, `"level":"WARN"`) || !strings.Contains(line, cause.Error()) {
		t.Errorf("logged %q, want a WARN line with the cause", line)
	}

	logs.Reset()
	present(context.Background(), apperr.InvalidField("first", "must be from 0 to 100"))
	if logs.Len() > 0 {
		t.Errorf("a client's error was logged: %s", logs.String())
	}
}

// TestAStatementsDeadlineIsNoInternalError: a statement stopped by its own
// deadline (its database time) whose error reaches the presenter as it is,
// from rows read, is DEADLINE_EXCEEDED, never INTERNAL, and no ERROR line.
func TestAStatementsDeadlineIsNoInternalError(t *testing.T) {
	var logs strings.Builder
	present := presentError(slog.New(slog.NewJSONHandler(&logs, nil)))
	got := present(context.Background(), fmt.Errorf("input:1:465: r7 %w", context.DeadlineExceeded))
	if got.Extensions["code"] != apperr.DeadlineExceeded {
		t.Errorf("presented %q %v, want DEADLINE_EXCEEDED", got.Message, got.Extensions)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("logged an ERROR line: %s", logs.String())
	}
}
