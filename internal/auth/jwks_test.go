package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// issuer serves a JWKS, or 503 while down, and counts the fetches.
type issuer struct {
	mu      sync.Mutex
	up      bool
	keys    map[string]*rsa.PrivateKey
	hold    chan struct{} // when set, each fetch waits for it to close
	fetches atomic.Int32
}

func (i *issuer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	i.fetches.Add(1)
	i.mu.Lock()
	up, hold := i.up, i.hold
	keys := []any{}
	for kid, key := range i.keys {
		keys = append(keys, map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes())})
	}
	i.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if !up {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
}

func token(t *testing.T, key *rsa.PrivateKey, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "user-1"})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The issuer is down at start and comes back: a failing issuer is asked
// again after 1, 2, 4, 8, then every 10 seconds (on a clock the test moves),
// never more often, so a token verifies within 10 seconds of its return;
// until then tokens are UNAVAILABLE, not UNAUTHENTICATED.
func TestJWKSRecoversWithinTenSecondsOfTheIssuersReturn(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &issuer{keys: map[string]*rsa.PrivateKey{"k1": key}}
	srv := httptest.NewServer(iss)
	t.Cleanup(srv.Close)
	j := newJWKS(srv.URL, nil, jwksTimeout)
	now := time.Unix(1_000_000, 0)
	j.now = func() time.Time { return now }
	ctx := context.Background()
	tok := token(t, key, "k1")
	verify := func() error {
		_, err := jwt.Parse(tok, j.keyfunc(ctx), jwt.WithValidMethods(signingMethods))
		return err
	}
	outage := func(err error) bool {
		var e *apperr.Error
		return errors.As(err, &e) && e.Code == apperr.Unavailable
	}

	<-j.start(false) // as NewJWT does at start
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("fetches at start: %d, want 1", n)
	}
	var schedule []time.Duration
	last := now
	for len(schedule) < 7 {
		before := iss.fetches.Load()
		if err := verify(); !outage(err) {
			t.Fatalf("a token while the issuer is down: %v, want UNAVAILABLE", err)
		}
		if iss.fetches.Load() != before {
			schedule = append(schedule, now.Sub(last))
			last = now
		}
		now = now.Add(500 * time.Millisecond)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if schedule[i] != want[i] {
			t.Fatalf("intervals between fetches of a failing issuer: %v, want %v", schedule, want)
		}
	}

	iss.mu.Lock()
	iss.up = true
	iss.mu.Unlock()
	back := now
	for verify() != nil {
		if now.Sub(back) > 30*time.Second {
			t.Fatalf("a valid token still refused %s after the issuer came back", now.Sub(back))
		}
		now = now.Add(500 * time.Millisecond)
	}
	if waited := now.Sub(back); waited > jwksMaxRetry {
		t.Errorf("a valid token verified %s after the issuer came back, want within %s", waited, jwksMaxRetry)
	}

	// A token naming a key the set lacks (a rotation, or made up) waits for
	// one fetch, shared by all the requests that need it; then, until
	// jwksRefetchEvery has passed, such tokens are refused without one.
	rotated, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(jwksRefetchEvery)
	hold := make(chan struct{})
	iss.mu.Lock()
	iss.keys["k2"], iss.hold = rotated, hold
	iss.mu.Unlock()
	before := iss.fetches.Load()
	newTok := token(t, rotated, "k2")
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = jwt.Parse(newTok, j.keyfunc(ctx), jwt.WithValidMethods(signingMethods))
		})
	}
	for iss.fetches.Load() == before {
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	if n := iss.fetches.Load() - before; n != 1 {
		t.Errorf("10 tokens naming a new key at once: %d fetches, want 1", n)
	}
	for _, err := range errs {
		if err != nil {
			t.Errorf("a token signed with a key rotated in: %v", err)
		}
	}
	before = iss.fetches.Load()
	if _, err := jwt.Parse(token(t, rotated, "k3"), j.keyfunc(ctx), jwt.WithValidMethods(signingMethods)); err == nil || outage(err) {
		t.Errorf("a token naming an unknown key, the issuer up: %v, want refused as invalid", err)
	}
	if n := iss.fetches.Load() - before; n != 0 {
		t.Errorf("a made-up key within %s of the last fetch: %d fetches, want none", jwksRefetchEvery, n)
	}
}
