package onewrite_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/onewrite"
)

// countingListener counts the writes to its connections, as the system
// calls they are.
type countingListener struct {
	net.Listener
	mu     sync.Mutex
	writes int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// wrapper is a middleware's ResponseWriter, reached through Unwrap as
// the server's are.
type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serve serves answer with Answer, in parts, on a listener of Listen over
// a counting one; it returns the server's address and the counter.
func serve(t *testing.T, wrapped bool, answer []byte) (string, *countingListener) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		half := len(answer) / 2
		_ = onewrite.Answer(wrapper{w}, r, http.StatusOK, answer[:half], answer[half:])
	}))
	counting := &countingListener{Listener: srv.Listener}
	srv.Listener = counting
	if wrapped {
		srv.Listener = onewrite.Listen(counting)
		onewrite.Serve(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, counting
}

func get(t *testing.T, client *http.Client, url string) *http.Response {
	t.Helper()
	res, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An answer of a few KiB (a page of inventories) leaves in one write, with
// its length and whole, on a kept-alive connection answer after answer;
// without Listen, net/http sends it in more.
func TestAnAnswerLeavesInOneWrite(t *testing.T) {
	answer := bytes.Repeat([]byte("0123456789abcdef"), 600) // 9.6 KB
	for _, wrapped := range []bool{true, false} {
		url, counting := serve(t, wrapped, answer)
		client := &http.Client{Transport: &http.Transport{}}
		for i := range 3 {
			before := counting.count()
			res := get(t, client, url)
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || !bytes.Equal(body, answer) {
				t.Fatalf("wrapped %v, answer %d: read %d bytes (%v), want the %d written", wrapped, i, len(body), err, len(answer))
			}
			if got := res.Header.Get("Content-Length"); got != strconv.Itoa(len(answer)) || res.TransferEncoding != nil {
				t.Errorf("wrapped %v: Content-Length %q, Transfer-Encoding %v; want %d and none", wrapped, got, res.TransferEncoding, len(answer))
			}
			writes := counting.count() - before
			if wrapped && writes != 1 {
				t.Errorf("answer %d left in %d writes, want 1", i, writes)
			}
			if !wrapped && writes < 2 {
				t.Errorf("without Listen, answer %d left in %d writes: the test no longer shows what Listen changes", i, writes)
			}
		}
	}
}

// An answer past MaxHeld is sent as net/http sends it, whole and with its
// length, and the connection then holds the next answer again.
func TestAnAnswerPastMaxHeldIsSentAsItComes(t *testing.T) {
	answer := bytes.Repeat([]byte("x"), onewrite.MaxHeld+1)
	url, counting := serve(t, true, answer)
	res := get(t, http.DefaultClient, url)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Equal(body, answer) || res.ContentLength != int64(len(answer)) {
		t.Fatalf("read %d bytes of Content-Length %d, want %d", len(body), res.ContentLength, len(answer))
	}
	if counting.count() < 2 {
		t.Errorf("an answer past MaxHeld left in %d write: it was held", counting.count())
	}
}

// Under Handler, the answer leaves once every middleware inside it has
// returned (what an access log or a trace records of the request is done
// when the client has its answer), still in one write.
func TestUnderHandlerTheAnswerLeavesAfterTheMiddleware(t *testing.T) {
	answer := bytes.Repeat([]byte("0123456789abcdef"), 600)
	var middlewareDone atomic.Bool
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = onewrite.Answer(w, r, http.StatusOK, answer)
	})
	middleware := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(wrapper{w}, r)
		time.Sleep(50 * time.Millisecond) // the client would have its answer by now
		middlewareDone.Store(true)
	})
	srv := httptest.NewUnstartedServer(onewrite.Handler(middleware))
	counting := &countingListener{Listener: srv.Listener}
	srv.Listener = onewrite.Listen(counting)
	onewrite.Serve(srv.Config)
	srv.Start()
	t.Cleanup(srv.Close)

	res := get(t, http.DefaultClient, srv.URL)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Equal(body, answer) {
		t.Fatalf("read %d bytes, want the %d written", len(body), len(answer))
	}
	if !middlewareDone.Load() {
		t.Error("the client had its answer before the middleware around it returned")
	}
	if n := counting.count(); n != 1 {
		t.Errorf("the answer left in %d writes, want 1", n)
	}
}
