package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The real server tells a receiver of an inventory fully signed and of
// its PDF stored (the signed PDF's job writes that event), each delivery
// signed with the endpoint's secret as Standard Webhooks says, checked with
// its reference library.
func TestTheServerDeliversSignedWebhooks(t *testing.T) {
	m := launchWith(t, func(c *Config) { c.WebhooksAllowPrivate = "on" })
	closeAfter(t, m)
	var mu sync.Mutex
	var secret string
	got := map[string]bool{} // type → verified
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		var p struct{ Type string }
		_ = json.Unmarshal(body, &p)
		got[p.Type] = got[p.Type] || verifiedByTheReferenceLibrary(secret, r.Header, body) == nil
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	srv := &apitest.Server{URL: m.URL()}
	var made struct {
		CreateWebhookEndpoint struct{ Secret string }
	}
	mu.Lock()
	srv.MustData(t, datagen.DemoCompanies[0].String(),
		`mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { id } } }`,
		map[string]any{"input": map[string]any{"url": rcv.URL + "/hooks", "events": []string{"FULLY_SIGNED", "PDF_READY"}}}, &made)
	secret = made.CreateWebhookEndpoint.Secret
	mu.Unlock()
	signAll(t, m)
	want := []string{"inventory.fully_signed", "inventory.pdf_ready"}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		done := got[want[0]] && got[want[1]]
		seen := len(got)
		mu.Unlock()
		if done && seen == 2 {
			return
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("deliveries by type (verified): %v; want %v, each verified", got, want)
		}
	}
}

// Environment of the killed process of TestAServerKilledAfterTheWriteDeliversOnRestart.
const (
	webhookKilledURLEnv      = "INVENTORYD_TEST_WEBHOOK_KILLED_DB"
	webhookKilledReceiverEnv = "INVENTORYD_TEST_WEBHOOK_RECEIVER"
)

// The acceptance of issue 37's webhooks: a server killed (SIGKILL) after
// a write committed and before its delivery was sent (it works no jobs)
// leaves the delivery and its job; the server started again on the
// database sends it. (With the restarted server's jobs off too, it fails.)
func TestAServerKilledAfterTheWriteDeliversOnRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and kills it")
	}
	var mu sync.Mutex
	var got []string // the types received, verified
	var secret string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct{ Type string }
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		defer mu.Unlock()
		if err := verifiedByTheReferenceLibrary(secret, r.Header, body); err != nil {
			p.Type += " (not verified: " + err.Error() + ")"
		}
		got = append(got, p.Type)
	}))
	defer rcv.Close()
	url := testdb.DemoRecords.URL(t)
	child := exec.Command(os.Args[0], "-test.run=^TestWebhookKilledServerProcess$", "-test.v")
	child.Env = append(os.Environ(), webhookKilledURLEnv+"="+url, webhookKilledReceiverEnv+"="+rcv.URL)
	var stderr strings.Builder
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	signed := false
	for lines := bufio.NewScanner(out); lines.Scan(); {
		if made, ok := strings.CutPrefix(lines.Text(), "SECRET "); ok {
			mu.Lock()
			secret = made
			mu.Unlock()
		}
		if strings.HasPrefix(lines.Text(), "SIGNED ") {
			signed = true
			break
		}
	}
	if !signed {
		t.Fatalf("the server process signed nothing: %s", stderr.String())
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL: no shutdown of any kind
		t.Fatal(err)
	}
	_ = child.Wait()
	go io.Copy(io.Discard, out)
	mu.Lock()
	before := len(got)
	mu.Unlock()
	if before != 0 {
		t.Fatalf("delivered before the restart: %d (the killed server worked no jobs)", before)
	}
	m := launchOn(t, url, slog.New(slog.DiscardHandler), func(c *Config) { c.WebhooksAllowPrivate = "on" })
	closeAfter(t, m)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		done := slices.Contains(got, "inventory.fully_signed")
		mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery of the killed server's signature was not sent within 20 s of the restart (got %v)", got)
		}
	}
}

// TestWebhookKilledServerProcess is the server process the test above
// kills: it serves with jobs off, registers the receiver, signs an
// inventory through its own API, says so, and waits to be killed.
func TestWebhookKilledServerProcess(t *testing.T) {
	url, receiver := os.Getenv(webhookKilledURLEnv), os.Getenv(webhookKilledReceiverEnv)
	if url == "" {
		t.Skip("run by TestAServerKilledAfterTheWriteDeliversOnRestart")
	}
	m := launchOn(t, url, slog.New(slog.DiscardHandler), func(c *Config) { c.Jobs = "off"; c.WebhooksAllowPrivate = "on" })
	srv := &apitest.Server{URL: m.URL()}
	var made struct{ CreateWebhookEndpoint struct{ Secret string } }
	srv.MustData(t, datagen.DemoCompanies[0].String(),
		`mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }`,
		map[string]any{"input": map[string]any{"url": receiver, "events": []string{"FULLY_SIGNED"}}}, &made)
	fmt.Println("SECRET " + made.CreateWebhookEndpoint.Secret)
	id := signAll(t, m)
	fmt.Println("SIGNED " + id.String())
	time.Sleep(time.Hour)
}

// verifiedByTheReferenceLibrary checks a delivery as a receiver would, with
// the Standard Webhooks reference library, apart from the service's code.
func verifiedByTheReferenceLibrary(secret string, h http.Header, body []byte) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.Verify(body, h)
}
