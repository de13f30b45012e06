// Package requestid gives every request an id that its answer, its error
// bodies and its log lines all carry, so that a user's error report leads to
// the lines that explain it.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
)

// Header carries the id in and out.
const Header = "X-Request-Id"

type ctxKey struct{}

// Middleware takes the X-Request-Id a client or proxy sent, when it is a
// plain token (at most 128 of A-Z a-z 0-9 . _ - : so that it cannot forge log
// lines), or makes one; it answers it in the same header and keeps it in the
// request's context.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !plain(id) {
			id = generate()
		}
		w.Header().Set(Header, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, id)))
	})
}

// From returns the request's id, or "" outside a request.
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

func plain(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

func generate() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// handler adds request_id to every line logged with a request's context.
type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if id := From(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.Handler.WithAttrs(attrs)}
}
func (h handler) WithGroup(name string) slog.Handler { return handler{h.Handler.WithGroup(name)} }

// Logger is log with request ids added (once: a logger that has them already
// is returned as it is).
func Logger(log *slog.Logger) *slog.Logger {
	if _, ok := log.Handler().(handler); ok {
		return log
	}
	return slog.New(handler{log.Handler()})
}
