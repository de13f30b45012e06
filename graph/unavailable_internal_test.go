package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

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

func TestRetryAfterFollowsUnavailable(t *testing.T) {
	withCode := func(code any) *gqlerror.Error {
		return &gqlerror.Error{Message: "x", Extensions: map[string]any{"code": code}}
	}
	retry := strconv.Itoa(apperr.RetryAfterSeconds)
	for _, tt := range []struct {
		name string
		res  *graphql.Response
		want string
	}{
		{"no answer", nil, ""},
		{"data", &graphql.Response{Data: []byte(`{"a":1}`)}, ""},
		{"other errors", &graphql.Response{Errors: gqlerror.List{withCode(apperr.Internal), withCode("GRAPHQL_VALIDATION_FAILED"), {Message: "no code"}}}, ""},
		{"unavailable among others", &graphql.Response{Errors: gqlerror.List{withCode(apperr.NotFound), withCode(apperr.Unavailable)}}, retry},
		{"unavailable as text", &graphql.Response{Errors: gqlerror.List{withCode("UNAVAILABLE")}}, retry},
	} {
		h := http.Header{}
		setRetryAfter(h, tt.res)
		if got := h.Get("Retry-After"); got != tt.want {
			t.Errorf("%s: Retry-After %q, want %q", tt.name, got, tt.want)
		}
	}
}

// An answer is an outage's (503, no data) when every error is UNAVAILABLE
// and nothing was answered: no data, a null one, or only nulls at its root
// (addItemPhoto to a store that refuses writes).
func TestAnOutageIsAnAnswerWithNothingAnswered(t *testing.T) {
	unavailable := gqlerror.List{{Message: "x", Extensions: map[string]any{"code": apperr.Unavailable}}}
	for data, want := range map[string]bool{
		``: true, `null`: true, `{"addItemPhoto":null}`: true, `{"a":null,"b":null}`: true,
		`{"a":null,"b":{"id":"1"}}`: false, `{"__schema":{"types":[]}}`: false, `{"a":[]}`: false,
	} {
		if got := outage(&graphql.Response{Data: []byte(data), Errors: unavailable}); got != want {
			t.Errorf("%s: outage %v, want %v", data, got, want)
		}
	}
	internal := gqlerror.List{{Message: "x", Extensions: map[string]any{"code": apperr.Internal}}}
	if outage(&graphql.Response{Data: []byte(`{"addItemPhoto":null}`), Errors: internal}) {
		t.Error("an INTERNAL error is an outage")
	}
}
