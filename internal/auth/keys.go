package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/apikey"
	"github.com/propertyrecords/inventory/internal/store"
)

// keyPrefix starts every API key, so that a key pasted where it does not
// belong is recognisable (secret scanners look for such prefixes).
const keyPrefix = "ik_"

// keyLength is the length of a key: the prefix and 32 random bytes.
var keyLength = len(keyPrefix) + base64.RawURLEncoding.EncodedLen(32)

// lastUsedEvery is how stale last_used_at may get: writing it on every
// request would make each read a write.
const lastUsedEvery = time.Minute

// Keys are the API keys in the database.
type Keys struct {
	client *ent.Client

	mu   sync.Mutex
	used map[uuid.UUID]time.Time // last_used_at as this process last wrote it
}

// NewKeys returns the API keys kept through client.
func NewKeys(client *ent.Client) *Keys { return &Keys{client: client, used: map[uuid.UUID]time.Time{}} }

// Scope is what a key may do: ScopeRead, or ScopeWrite (read and write).
type Scope = apikey.Scope

// The scopes a key is made with.
const (
	ScopeRead  = apikey.ScopeRead
	ScopeWrite = apikey.ScopeWrite
)

// Create makes a key for company under name, with scope, and returns it:
// the only time it is seen, since only its hash is kept.
func (k *Keys) Create(ctx context.Context, company uuid.UUID, name string, scope Scope) (string, *ent.APIKey, error) {
	if err := apikey.ScopeValidator(scope); err != nil {
		return "", nil, fmt.Errorf("apikey: scope %q: use read or write", scope)
	}
	if company == uuid.Nil {
		return "", nil, fmt.Errorf("apikey: give the company's UUID")
	}
	if _, err := uuid.Parse(name); err == nil {
		return "", nil, fmt.Errorf("apikey: a name cannot be a UUID: revoke takes either, and would read it as an id")
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", nil, err
	}
	key := keyPrefix + base64.RawURLEncoding.EncodeToString(secret)
	rec, err := k.client.APIKey.Create().SetCompanyID(company).SetName(name).SetHash(hash(key)).SetScope(scope).Save(ctx)
	if ent.IsConstraintError(err) {
		return "", nil, fmt.Errorf("apikey: a key named %q exists: names are unique", name)
	}
	if err != nil {
		return "", nil, fmt.Errorf("apikey: %w", err)
	}
	return key, rec, nil
}

// List returns the keys, of one company unless company is uuid.Nil, by name.
func (k *Keys) List(ctx context.Context, company uuid.UUID) ([]*ent.APIKey, error) {
	q := k.client.APIKey.Query().Order(apikey.ByName())
	if company != uuid.Nil {
		q.Where(apikey.CompanyID(company))
	}
	return q.All(store.ReadLatest(ctx))
}

// Revoke ends the key with this name or id; it is refused from then on.
func (k *Keys) Revoke(ctx context.Context, nameOrID string) (*ent.APIKey, error) {
	which := apikey.Name(nameOrID)
	if id, err := uuid.Parse(nameOrID); err == nil {
		which = apikey.ID(id)
	}
	rec, err := k.client.APIKey.Query().Where(which).Only(store.ReadLatest(ctx))
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("apikey: no key named %q", nameOrID)
	}
	if err != nil || rec.RevokedAt != nil {
		return rec, err
	}
	return k.client.APIKey.UpdateOne(rec).SetRevokedAt(time.Now().UTC()).Save(ctx)
}

// Verify finds the key's company. Keys are looked up by their hash, so a
// lookup learns nothing about the keys that exist.
func (k *Keys) Verify(ctx context.Context, key string) (Caller, error) {
	if len(key) != keyLength || !strings.HasPrefix(key, keyPrefix) {
		return Caller{}, invalid("not an API key of this service")
	}
	// A revocation counts from its commit: never read from a standby that
	// has not replayed it yet.
	rec, err := k.client.APIKey.Query().Where(apikey.Hash(hash(key))).Only(store.ReadLatest(ctx))
	switch {
	case ent.IsNotFound(err):
		return Caller{}, invalid("unknown API key")
	case err != nil:
		return Caller{}, err
	case rec.RevokedAt != nil:
		return Caller{}, invalid("API key %q was revoked", rec.Name)
	}
	k.noteUse(ctx, rec)
	return Caller{Company: rec.CompanyID, Name: rec.Name, MayWrite: rec.Scope == ScopeWrite}, nil
}

// noteUse writes the key's last_used_at, at most once a minute per key in
// this process, after the request (a write must not hold up a read, on
// SQLite least of all), and best effort: a key is no less valid for a lost
// note of its use. The time written is the use's, to the second, not the
// minute's start: that would put a new key's first use before its
// creation.
func (k *Keys) noteUse(ctx context.Context, rec *ent.APIKey) {
	now := time.Now().UTC().Truncate(time.Second)
	k.mu.Lock()
	last, seen := k.used[rec.ID]
	stale := (!seen || now.Sub(last) >= lastUsedEvery) && (rec.LastUsedAt == nil || now.Sub(*rec.LastUsedAt) >= lastUsedEvery)
	if stale {
		k.used[rec.ID] = now
	}
	k.mu.Unlock()
	if !stale {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = k.client.APIKey.UpdateOneID(rec.ID).SetLastUsedAt(now).Exec(ctx)
	}()
}

func hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
