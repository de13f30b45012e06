package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// TestACommitLeftUnansweredSaysTheWriteMayHaveBeenSaved: a connection lost
// after the COMMIT reached PostgreSQL, before its answer came back, is an
// outage (UNAVAILABLE) whose message says the write may have been saved, and
// how to send it again safely; here it was saved.
func TestACommitLeftUnansweredSaysTheWriteMayHaveBeenSaved(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL): a connection lost between COMMIT and its answer")
	}
	direct := testdb.URL(t)
	proxy := &commitCutter{}
	st := testdb.OpenURL(t, proxy.start(t, direct))
	ctx := tenant.Unrestricted(context.Background(), "test: a commit left unanswered")
	tx, err := st.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := "Madera " + uuid.NewString()[:8]
	if _, err := tx.Material.Create().SetName(name).Save(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.armed.Store(true)
	err = tx.Commit()
	e, ok := errors.AsType[*apperr.Error](err)
	if !ok || e.Code != apperr.Unavailable || e.Message != store.CommitUnanswered {
		t.Fatalf("a commit left unanswered: %v, want UNAVAILABLE saying %q", err, store.CommitUnanswered)
	}
	// The client heard nothing, so it may ask before PostgreSQL is done.
	var n int
	for deadline := time.Now().Add(5 * time.Second); n == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err = st.Client.Material.Query().Where(material.Name(name)).Count(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 {
		t.Errorf("the write after its unanswered commit: %d rows; want it saved (the COMMIT reached PostgreSQL)", n)
	}
}

// commitCutter forwards connections to PostgreSQL; once armed, it lets the
// next COMMIT through and cuts that connection before its answer returns.
type commitCutter struct{ armed atomic.Bool }

func (c *commitCutter) start(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	postgres := u.Host
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", postgres)
			if err != nil {
				client.Close()
				continue
			}
			go func() { _, _ = io.Copy(client, server); client.Close() }()
			go c.forward(client, server)
		}
	}()
	u.Host = l.Addr().String()
	return u.String()
}

// forward copies what the client sends; a COMMIT seen while armed goes to
// the server, the client's connection is closed before the answer can
// come back, and the server's is kept open long enough to commit.
func (c *commitCutter) forward(client, server net.Conn) {
	defer server.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			cut := bytes.Contains(bytes.ToLower(buf[:n]), []byte("commit")) && c.armed.CompareAndSwap(true, false)
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
			if cut {
				client.Close() // before PostgreSQL can answer
				time.Sleep(200 * time.Millisecond)
				return
			}
		}
		if err != nil {
			return
		}
	}
}
