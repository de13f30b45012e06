package server_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// sharedAddress plays an office behind one address: an attacker (or a
// misconfigured app) sends bad credentials until the address is throttled,
// then keeps sending them between the good callers' requests. Every good
// credential is served, the one used before the attack and one never seen
// before alike; every bad one is told to wait.
func sharedAddress(t *testing.T, srv *apitest.Server, burst int, bad func(i int) string, seen, unseen string) {
	t.Helper()
	const path = "/api/v1/inventories"
	if status, _, body := request(t, http.MethodGet, srv.URL+path, bearer(seen), nil); status != http.StatusOK {
		t.Fatalf("a valid credential before any bad one: %d %s, want 200", status, body)
	}
	for i := range burst {
		if status, _, body := request(t, http.MethodGet, srv.URL+path, bearer(bad(i)), nil); status != http.StatusUnauthorized {
			t.Fatalf("bad credential %d of a burst of %d: %d %s, want 401", i+1, burst, status, body)
		}
	}
	var served, told int
	const rounds = 10
	for i := range rounds {
		status, header, body := request(t, http.MethodGet, srv.URL+path, bearer(bad(burst+i)), nil)
		if status == http.StatusTooManyRequests && header.Get("Retry-After") != "" {
			told++
		} else {
			t.Errorf("a bad credential from the throttled address: %d %.200s, want 429 with Retry-After", status, body)
		}
		if status, _, body := request(t, http.MethodGet, srv.URL+path, bearer(seen), nil); status == http.StatusOK {
			served++
		} else {
			t.Errorf("a valid credential from the throttled address: %d %.200s, want 200", status, body)
		}
	}
	if served != rounds || told != rounds {
		t.Errorf("between %d bad credentials, %d of %d requests with a valid one served, want all", told, served, rounds)
	}
	if status, _, body := request(t, http.MethodGet, srv.URL+path, bearer(unseen), nil); status != http.StatusOK {
		t.Errorf("a valid credential first seen from the throttled address: %d %.200s, want 200", status, body)
	}
	// Without any credential, nothing can be verified: the address still waits.
	if status, _, _ := request(t, http.MethodGet, srv.URL+path, nil, nil); status != http.StatusTooManyRequests {
		t.Errorf("no credential from the throttled address: %d, want 429", status)
	}
}

// The limits' rate is so slow that no bucket refills during the test, and
// their burst holds every good request the test makes with one credential.
const (
	sharedRate  = 0.001
	sharedBurst = 20
)

func TestAValidAPIKeyIsServedWhateverItsAddressSentBefore(t *testing.T) {
	st := testdb.Open(t)
	keys := auth.NewKeys(st.Client)
	company := uuid.New()
	seen, _, err := keys.Create(context.Background(), company, "office-app", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	unseen, _, err := keys.Create(context.Background(), company, "office-report", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Auth: auth.APIKey, Verifier: keys,
		Limiter: auth.NewLimiter(sharedRate, sharedBurst)})
	// Well-formed keys, so that each is looked up in the database.
	guess := func(int) string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return "ik_" + base64.RawURLEncoding.EncodeToString(b)
	}
	sharedAddress(t, srv, sharedBurst, guess, seen, unseen)
}

func TestAValidTokenIsServedWhateverItsAddressSentBefore(t *testing.T) {
	st := testdb.Open(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	issuer := &issuerKeys{keys: map[string]*rsa.PrivateKey{"k1": key}}
	verifier, err := auth.NewJWT(ctx, auth.JWTOptions{JWKSURL: issuer.serve(t), Issuer: "https://id.example.com",
		Audience: "inventory", CompanyClaim: "company_id", Skew: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Auth: auth.JWT, Verifier: verifier,
		Limiter: auth.NewLimiter(sharedRate, sharedBurst)})
	company := uuid.New()
	forged := func(int) string { return signed(t, forger, "k1", company, nil) }
	other := signed(t, key, "k1", company, func(c jwt.MapClaims) { c["sub"] = "user-2" })
	sharedAddress(t, srv, sharedBurst, forged, signed(t, key, "k1", company, nil), other)
}

// An issuer down at start is an outage, not the clients' fault: its tokens
// are answered 503 with Retry-After until it is back, and then served (the
// retry schedule itself is TestJWKSRecoversWithinTenSecondsOfTheIssuersReturn's).
func TestTokensOfAnIssuerThatIsDownAreUnavailableUntilItIsBack(t *testing.T) {
	st := testdb.Open(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	keys := &issuerKeys{keys: map[string]*rsa.PrivateKey{"k1": key}}
	jwksURL := keys.serve(t)
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		http.Redirect(w, r, jwksURL, http.StatusFound)
	}))
	t.Cleanup(issuer.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	verifier, err := auth.NewJWT(ctx, auth.JWTOptions{JWKSURL: issuer.URL, Issuer: "https://id.example.com",
		Audience: "inventory", CompanyClaim: "company_id", Skew: time.Minute})
	if err != nil {
		t.Fatalf("an issuer down at start: %v, want the start to go on", err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Auth: auth.JWT, Verifier: verifier})
	tok := bearer(signed(t, key, "k1", uuid.New(), nil))
	for _, path := range []string{"/api/v1/inventories", "/graphql"} {
		method, body := http.MethodGet, []byte(nil)
		if path == "/graphql" {
			method, body = http.MethodPost, nodeQuery(uuid.New())
		}
		status, header, answer := request(t, method, srv.URL+path, tok, body)
		if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || !strings.Contains(string(answer), `"UNAVAILABLE"`) {
			t.Errorf("%s with a valid token, its issuer down: %d %q %.300s, want 503 UNAVAILABLE with Retry-After", path, status, header.Get("Retry-After"), answer)
		}
	}
	up.Store(true)
	// Recovery takes one retry interval (a second here, ten at most); the
	// bound is the 30 seconds, far above it, not a measure of it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		status, _, answer := request(t, http.MethodGet, srv.URL+"/api/v1/inventories", tok, nil)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a valid token 30 s after its issuer came back: %d %.300s, want 200", status, answer)
		}
	}
}
