package main

import (
	"net/http"
	"sync/atomic"
)

// swappableHandler is the server's handler, replaced once: the starting
// page while the first start loads the demo data, then the service.
type swappableHandler struct{ current atomic.Pointer[http.Handler] }

func (s *swappableHandler) set(h http.Handler) { s.current.Store(&h) }

func (s *swappableHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.current.Load()).ServeHTTP(w, r)
}

// startingPage answers while the first start loads the demo data (seconds,
// after a first build that printed nothing for minutes): the IDE's address
// says what is happening and opens the IDE by itself once it is there;
// /healthz is alive, /readyz not ready, and every other request is told to
// come back (503, Retry-After), as a load balancer and a client expect.
func startingPage() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		_, _ = w.Write([]byte(startingHTML))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","errors":[{"message":"the server is loading its demo data (first start only); try again in a moment","extensions":{"code":"UNAVAILABLE"}}]}`))
	})
	return mux
}

const startingHTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="refresh" content="1">
  <title>Inventory records · starting</title>
</head>
<body style="font-family: system-ui, sans-serif; margin: 3rem;">
  <h1>Loading the demo data…</h1>
  <p>First start only: the server is writing two demo companies' properties, inventories, photos and
  signed PDFs. This page opens the GraphQL IDE by itself in a few seconds.</p>
</body>
</html>
`
