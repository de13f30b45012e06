// Package onewrite sends an HTTP/1.x answer that is whole in memory to its
// connection in one write. net/http buffers a connection's output in 4 KiB:
// an answer past about 3.8 KiB (a page of 20 inventories is 4.9 KB) leaves
// in two writes, the header with the first part and then the rest, each a
// system call and, on a loopback or a local network, the reader's wake-up
// too. The connections of a listener wrapped by Listen can hold what
// net/http writes while the answer is written (Answer), then send it with
// one write.
package onewrite

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// MaxHeld bounds the answer a connection holds to send in one write: a
// larger one is sent as net/http sends it, where one write more is little
// beside its size, and its copy would cost memory.
const MaxHeld = 64 << 10

// Listen wraps l's connections so that Answer can hold their output.
func Listen(l net.Listener) net.Listener { return listener{l} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c}, nil
}

type connKey struct{}

// connContext is the http.Server's ConnContext that lets Answer find a
// request's connection; it keeps any other the server had.
func connContext(next func(context.Context, net.Conn) context.Context) func(context.Context, net.Conn) context.Context {
	return func(ctx context.Context, c net.Conn) context.Context {
		if next != nil {
			ctx = next(ctx, c)
		}
		if held, ok := c.(*conn); ok {
			ctx = context.WithValue(ctx, connKey{}, held)
		}
		return ctx
	}
}

// Serve configures srv for Listen's connections (its ConnContext); call it
// before srv serves.
func Serve(srv *http.Server) { srv.ConnContext = connContext(srv.ConnContext) }

// holding is r's connection when it can hold r's answer: one of Listen's,
// over HTTP/1.x (HTTP/2 writes a connection's streams from a goroutine of
// its own); nil otherwise.
func holding(r *http.Request) *conn {
	c, _ := r.Context().Value(connKey{}).(*conn)
	if c == nil || r.ProtoMajor != 1 {
		return nil
	}
	return c
}

// conn holds what is written to it while held is set, for one write at
// release. net/http writes an HTTP/1.x connection from the goroutine that
// serves its requests only, which is the one holding and releasing.
type conn struct {
	net.Conn
	held *[]byte // nil: writes go straight out
	// releasedByHandler: Handler, around the request being served, sends
	// what is held once every middleware has returned.
	releasedByHandler bool
}

var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

func (c *conn) Write(p []byte) (int, error) {
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// ReadFrom keeps the connection's own (sendfile, splice) for the files
// served from disk: net/http uses it when the connection has one.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok && c.held == nil {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c}, r)
}

// CloseWrite lets net/http half-close the connection as it does a TCP one.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

type writerOnly struct{ io.Writer }

func (c *conn) hold() { c.held = heldBuffers.Get().(*[]byte) }

// release writes what was held in one write. A connection that fails it
// is closed, so that net/http, which was told its writes went out, serves
// nothing more on it.
func (c *conn) release() error {
	held := c.held
	c.held = nil
	_, err := c.Conn.Write(*held)
	if cap(*held) <= MaxHeld+8<<10 {
		*held = (*held)[:0]
		heldBuffers.Put(held)
	}
	if err != nil {
		_ = c.Conn.Close()
	}
	return err
}

// Handler serves next, and sends what Answer held once next has returned:
// the middleware around the answer (access log, metrics, tracing) then ends
// before the client has its answer, as it did when net/http sent the answer's
// last part after the handler. Without it, Answer sends what it held itself.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := holding(r)
		if c == nil {
			next.ServeHTTP(w, r)
			return
		}
		c.releasedByHandler = true
		defer func() {
			c.releasedByHandler = false
			if c.held != nil {
				_ = http.NewResponseController(w).Flush()
				_ = c.release()
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Answer writes body, whole, as r's answer with status and its length,
// after the header w has been given: on a connection of Listen, over
// HTTP/1.x, and at most MaxHeld bytes, in one write of the header and the
// body together, once Handler's next returns (or at once without Handler).
func Answer(w http.ResponseWriter, r *http.Request, status int, body ...[]byte) error {
	size := 0
	for _, b := range body {
		size += len(b)
	}
	w.Header().Set("Content-Length", strconv.Itoa(size))
	c := holding(r)
	if c == nil || size > MaxHeld || c.held != nil {
		w.WriteHeader(status)
		return write(w, body)
	}
	c.hold()
	w.WriteHeader(status)
	err := write(w, body)
	if err == nil {
		// Everything net/http holds (header, body) goes to the connection,
		// which holds it in turn.
		err = http.NewResponseController(w).Flush()
	}
	if c.releasedByHandler && err == nil {
		return nil
	}
	if releaseErr := c.release(); err == nil {
		err = releaseErr
	}
	return err
}

func write(w http.ResponseWriter, body [][]byte) error {
	for _, b := range body {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
