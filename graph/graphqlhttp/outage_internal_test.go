package graphqlhttp

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/internal/apperr"
)

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
