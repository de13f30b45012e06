package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
)

// The real server tells a receiver of an inventory fully signed and of
// its PDF stored (the signed PDF's job writes that event), each delivery
// signed with the endpoint's secret as Standard Webhooks says, checked here
// apart from the service's code.
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
		key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(r.Header.Get("webhook-id") + "." + r.Header.Get("webhook-timestamp") + "." + string(body)))
		want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		var p struct{ Type string }
		_ = json.Unmarshal(body, &p)
		got[p.Type] = got[p.Type] || strings.Contains(" "+r.Header.Get("webhook-signature")+" ", " "+want+" ")
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
