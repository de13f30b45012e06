package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// A port in use is found before the database is opened or written.
func TestAPortInUseFailsBeforeAnythingIsWritten(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	cfg, err := parseConfig([]string{"--addr", taken.Addr().String(), "--data-dir", dir}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{Config: cfg, Log: slog.New(slog.DiscardHandler)}
	err = m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Run on a port in use: got %v", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close after a failed Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "inventory.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database was created before the port was found taken (stat: %v)", err)
	}
}

// outcome of one request sent while the server shuts down.
type outcome int

const (
	answered outcome = iota // 200
	refused                 // no connection: nothing was sent, the client knows it can retry elsewhere
	broken                  // anything else: EOF or reset on a request that was sent, or a 5xx
)

// send sends one request and tells its outcome, and for a broken one why.
func send(client *http.Client, url string) (outcome, string) {
	req, _ := http.NewRequest(http.MethodPost, url+"/graphql", strings.NewReader(`{"query":"{ inventories(first: 20) { totalCount edges { node { id environments { name items { name rating } } } } } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(tenant.Header, datagen.DemoCompanies[0].String())
	res, err := client.Do(req)
	if err != nil {
		if opErr, ok := errors.AsType[*net.OpError](err); ok && opErr.Op == "dial" {
			return refused, ""
		}
		return broken, err.Error()
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	switch {
	case err != nil:
		return broken, "reading the answer: " + err.Error()
	case res.StatusCode != http.StatusOK:
		return broken, fmt.Sprintf("%d %.300s", res.StatusCode, body)
	}
	return answered, ""
}

// Under SIGTERM (Close), with 20 keep-alive clients sending without pause
// through a load balancer that checks /readyz every 50 ms and takes the
// instance out of rotation when it answers 503, every request sent is
// answered: those in flight when the shutdown begins, and those sent before
// the balancer noticed, on connections the server is closing (each answer
// from then on says Connection: close). After the shutdown, a new connection
// is refused. The shutdown delay must outlast the balancer's check interval:
// a client that keeps dialing the instance when the listener closes has its
// connection reset from the accept queue, which no server can prevent.
func TestShutdownUnderLoadAnswersEveryRequestSent(t *testing.T) {
	m := launchWith(t, func(c *Config) { c.ShutdownDelay = time.Second })
	url := m.URL()
	transport := &http.Transport{MaxIdleConnsPerHost: 20}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}

	var inRotation atomic.Bool
	inRotation.Store(true)
	readiness := make(chan string, 1) // what /readyz said when the balancer took the instance out
	go func() {
		for {
			time.Sleep(50 * time.Millisecond)
			res, err := http.Get(url + "/readyz")
			if err != nil {
				inRotation.Store(false)
				readiness <- err.Error()
				return
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				inRotation.Store(false)
				readiness <- fmt.Sprintf("%d %s", res.StatusCode, body)
				return
			}
		}
	}()

	var (
		mu     sync.Mutex
		counts = map[outcome]int{}
		why    = map[string]int{}
		wg     sync.WaitGroup
	)
	for range 20 {
		wg.Go(func() {
			for inRotation.Load() {
				o, reason := send(client, url)
				mu.Lock()
				counts[o]++
				why[reason]++
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // every client has a kept-alive connection
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	wg.Wait()
	if said := <-readiness; said != `503 {"status":"shutting down"}` {
		t.Errorf("/readyz when the balancer took the instance out: got %s, want 503 shutting down", said)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if o, _ := send(client, url); o != refused {
		t.Errorf("a request after the shutdown: got outcome %d, want refused", o)
	}
	delete(why, "")
	t.Logf("during shutdown: %d answered, %d refused, %d broken", counts[answered], counts[refused], counts[broken])
	if counts[broken] > 0 || counts[refused] > 0 || counts[answered] == 0 {
		t.Errorf("got %d answered, %d refused, %d broken %v; want every request sent answered",
			counts[answered], counts[refused], counts[broken], why)
	}
}

// A request still running when the shutdown timeout passes is cut, and the
// error says which; the request ends as cancelled, not as an internal error
// on a database closed under it.
func TestShutdownNamesTheRequestsItCuts(t *testing.T) {
	var logged apitest.LogBuffer
	m := launchLogged(t, slog.New(slog.NewJSONHandler(&logged, nil)), func(c *Config) {
		c.ShutdownDelay, c.ShutdownTimeout = 0, 300*time.Millisecond
		c.DatabasePoolSize, c.AcquireTimeout = 1, 20*time.Second
	})
	// The one connection is held, so the request waits for it.
	tx, err := m.store.Client.Tx(tenant.Unrestricted(context.Background(), "test"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := http.Get(m.URL() + "/api/v1/inventories?x-company-id=" + datagen.DemoCompanies[0].String())
		if err == nil {
			res.Body.Close()
		}
	}()
	for m.drain == nil || len(m.drain.InFlight(time.Now())) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	err = m.Close()
	if err == nil || !strings.Contains(err.Error(), "1 request(s) still running after waiting 300ms were cut: GET /api/v1/inventories") {
		t.Errorf("Close with a request in flight: got %v", err)
	}
	// Its work was ended before the database closed under it.
	if running := m.drain.InFlight(time.Now()); len(running) > 0 {
		t.Errorf("requests still running after Close returned: %v", running)
	}
	_ = tx.Rollback()
	<-done
	if strings.Contains(logged.String(), `"level":"ERROR"`) {
		t.Errorf("the cut request logged an error:\n%s", logged.String())
	}
}
