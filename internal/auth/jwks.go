package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// The JWKS's fetch schedule. keyfunc's own (a refetch for an unknown key at
// most every five minutes) kept valid tokens refused for five minutes after
// an issuer that was down at start came back; this one retries a failing
// issuer after 1, 2, 4, 8, then every 10 seconds, so tokens verify within
// about ten seconds of its return, while an unreachable issuer sees one
// fetch at a time and at most one each 10 seconds however many requests
// wait on it.
const (
	// jwksRefreshEvery is how old the keys may get before a request has
	// them refetched (in the background: it is served with the old ones).
	jwksRefreshEvery = time.Hour
	// jwksRefetchEvery spaces fetches for keys a token names and the set
	// lacks (the issuer rotated: the first is fetched at once), so that
	// tokens naming made-up keys cost the issuer at most one fetch each
	// interval.
	jwksRefetchEvery = 10 * time.Second
	// jwksFirstRetry and jwksMaxRetry bound the back-off after failures.
	jwksFirstRetry = time.Second
	jwksMaxRetry   = 10 * time.Second
	// jwksMaxBytes bounds the JWKS read: a key set is a few kilobytes.
	jwksMaxBytes = 1 << 20
)

// jwks is an issuer's key set, fetched on demand, one fetch at a time.
type jwks struct {
	url     string
	client  *http.Client
	timeout time.Duration
	now     func() time.Time

	mu       sync.Mutex
	keys     keyfunc.Keyfunc // nil until a fetch succeeds
	fetched  time.Time       // of the keys
	next     time.Time       // while failing, no fetch before it
	unknown  time.Time       // of the last fetch for a key the set lacked
	failures int             // in a row, since the last success
	err      error           // of the last fetch, nil when it succeeded
	inFlight chan struct{}   // closed when the running fetch ends; nil when none runs
}

func newJWKS(url string, client *http.Client, timeout time.Duration) *jwks {
	if client == nil {
		client = http.DefaultClient
	}
	return &jwks{url: url, client: client, timeout: timeout, now: time.Now}
}

// retryAfter is the back-off after n failures in a row.
func retryAfter(n int) time.Duration {
	if n > 4 {
		return jwksMaxRetry
	}
	return min(jwksFirstRetry<<(n-1), jwksMaxRetry)
}

// keyfunc finds a token's key, fetching the set when the token names a key
// it lacks (or none is held yet) and the schedule allows a fetch. A token
// that cannot be checked because the issuer does not answer is the issuer's
// outage, not the client's fault: apperr.Unavailable.
func (j *jwks) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		keys, stale := j.current()
		if stale {
			j.start(false)
		}
		if keys != nil {
			key, err := keys.KeyfuncCtx(ctx)(t)
			if !errors.Is(err, jwkset.ErrKeyNotFound) {
				return key, err
			}
		}
		if err := j.fetch(ctx); err != nil {
			return nil, err
		}
		if keys, _ = j.current(); keys == nil {
			return nil, j.unavailable()
		}
		return keys.KeyfuncCtx(ctx)(t)
	}
}

// current returns the keys held, and whether they are due a refresh.
func (j *jwks) current() (keyfunc.Keyfunc, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.keys, j.keys != nil && j.now().Sub(j.fetched) >= jwksRefreshEvery
}

// fetch waits for a fetch of the set: the one running, or a new one when
// the schedule allows. With neither, it answers at once: nil when the
// issuer last answered (the key is not in its set), else the issuer's
// outage.
func (j *jwks) fetch(ctx context.Context) error {
	if done := j.start(true); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	j.mu.Lock()
	failing := j.err != nil
	j.mu.Unlock()
	if failing {
		return j.unavailable()
	}
	return nil
}

// start starts a fetch (for a key the set lacks, when unknownKey) unless
// one runs or the schedule forbids it, and returns the running fetch's
// channel (nil when none runs). The fetch is the issuer's, not a request's:
// it runs to its own timeout whatever becomes of the request that started
// it, since others wait on it.
func (j *jwks) start(unknownKey bool) <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inFlight != nil {
		return j.inFlight
	}
	now := j.now()
	switch {
	case j.err != nil && now.Before(j.next):
		return nil
	case j.err == nil && unknownKey && !j.unknown.IsZero() && now.Sub(j.unknown) < jwksRefetchEvery:
		return nil
	}
	if unknownKey {
		j.unknown = now
	}
	done := make(chan struct{})
	j.inFlight = done
	go func() {
		keys, err := j.get()
		j.mu.Lock()
		defer j.mu.Unlock()
		now := j.now()
		if err != nil {
			j.failures++
			j.err = err
			j.next = now.Add(retryAfter(j.failures))
		} else {
			j.keys, j.fetched, j.failures, j.err = keys, now, 0, nil
		}
		j.inFlight = nil
		close(done)
	}()
	return done
}

// get fetches and parses the set.
func (j *jwks) get() (keyfunc.Keyfunc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	res, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the issuer answered %s", res.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, jwksMaxBytes))
	if err != nil {
		return nil, err
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("the issuer's key set: %w", err)
	}
	storage, err := set.ToStorage()
	if err != nil {
		return nil, fmt.Errorf("the issuer's key set: %w", err)
	}
	return keyfunc.New(keyfunc.Options{Storage: storage})
}

// unavailable is the issuer's outage as the client reads it, with its cause
// for the logs.
func (j *jwks) unavailable() error {
	j.mu.Lock()
	cause := j.err
	j.mu.Unlock()
	if cause == nil {
		cause = errors.New("no key set fetched yet")
	}
	return &apperr.Error{Code: apperr.Unavailable, Cause: fmt.Errorf("jwt: fetching %s: %w", j.url, cause),
		Message: "the token's issuer does not answer, so its signature cannot be checked now: try again later"}
}
