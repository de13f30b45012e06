package graph

import (
	"net/http"

	"github.com/propertyrecords/inventory/graph/graphqlhttp"
	"github.com/propertyrecords/inventory/internal/apperr"
)

// What the HTTP transport (graph/graphqlhttp.Executor) asks of the executor
// besides running operations.

var _ graphqlhttp.Executor = (*Executor)(nil)

// WriteError answers a request refused before it reached GraphQL (by
// authentication or a rate limit) as a GraphQL error, presented, logged and
// counted as errors of operations are, with the status of its code.
func (e *Executor) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	presented := e.presenter(r.Context(), err)
	code := graphqlhttp.CodeOf(presented)
	apperr.SetRetryAfterFor(w.Header(), err)
	graphqlhttp.WriteGraphQLError(w, apperr.HTTPStatus(code), presented)
}

// MaxPhotoBytes bounds a photo addItemPhoto takes.
func (e *Executor) MaxPhotoBytes() int64 { return e.maxPhotoBytes }
