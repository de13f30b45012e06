package server

import (
	"net/http"

	"github.com/propertyrecords/inventory/internal/store"
)

// withReadSession makes each request's reads one session (store.WithReadSession):
// every statement of one GraphQL operation or REST call reads the same
// standby, or the primary, so that no answer mixes two points in time.
func withReadSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(store.WithReadSession(r.Context())))
	})
}
