package auth

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// JWTOptions configure the verification of OpenID Connect tokens.
type JWTOptions struct {
	// JWKSURL is where the issuer publishes its keys; KeyFile a local public
	// key (PEM) or key set (JWKS). Exactly one is set.
	JWKSURL, KeyFile string
	// Issuer and Audience must match the token's iss and aud.
	Issuer, Audience string
	// CompanyClaim names the claim that holds the company's UUID.
	CompanyClaim string
	// Skew is the clock difference tolerated on exp, nbf and iat.
	Skew time.Duration
	// HTTPClient fetches the JWKS (keyfunc's default when nil).
	HTTPClient *http.Client
}

// jwksTimeout bounds each fetch of the JWKS, the first one at start included.
const jwksTimeout = 5 * time.Second

// signingMethods are the algorithms taken: asymmetric only, so that no
// public key can ever be used as an HMAC secret.
var signingMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTVerifier verifies tokens with golang-jwt; keys come from the issuer's
// JWKS, held in memory, refetched hourly, and at once (at most every
// jwksRefetchEvery) when a token names a key it has not seen: the issuer
// rotated. See jwks for the schedule while the issuer is down.
type JWTVerifier struct {
	opts JWTOptions
	// keys finds the key of a token, bound by the request's context.
	keys   func(context.Context) jwt.Keyfunc
	parser *jwt.Parser
}

// NewJWT checks the options and prepares the keys. The JWKS is fetched
// first at start, for at most jwksTimeout (or until ctx ends); an issuer
// that does not answer then does not stop the start: tokens are answered
// UNAVAILABLE, and fetch it again on jwks's schedule, until it answers.
func NewJWT(ctx context.Context, o JWTOptions) (*JWTVerifier, error) {
	switch {
	case (o.JWKSURL == "") == (o.KeyFile == ""):
		return nil, errors.New("jwt: give a JWKS URL or a key file, one of the two")
	case o.Issuer == "" || o.Audience == "":
		return nil, errors.New("jwt: give the issuer and the audience that tokens must name")
	case o.CompanyClaim == "":
		return nil, errors.New("jwt: give the claim that names the company")
	}
	v := &JWTVerifier{opts: o, parser: jwt.NewParser(
		jwt.WithValidMethods(signingMethods),
		jwt.WithIssuer(o.Issuer),
		jwt.WithAudience(o.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(o.Skew),
	)}
	if o.KeyFile == "" {
		// Fetched once here, so the first token need not wait; an issuer
		// that does not answer at start is asked again by the first token.
		k := newJWKS(o.JWKSURL, o.HTTPClient, jwksTimeout)
		select {
		case <-k.start(false):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		v.keys = k.keyfunc
		return v, nil
	}
	raw, err := os.ReadFile(o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("jwt: reading the key file: %w", err)
	}
	if !strings.Contains(string(raw), "-----BEGIN") {
		k, err := keyfunc.NewJWKSetJSON(json.RawMessage(raw))
		if err != nil {
			return nil, fmt.Errorf("jwt: the key file is neither a PEM public key nor a JWKS: %w", err)
		}
		v.keys = k.KeyfuncCtx
		return v, nil
	}
	key, err := publicKeyFromPEM(raw)
	if err != nil {
		return nil, fmt.Errorf("jwt: the key file: %w", err)
	}
	v.keys = func(context.Context) jwt.Keyfunc { return func(*jwt.Token) (any, error) { return key, nil } }
	return v, nil
}

func publicKeyFromPEM(raw []byte) (crypto.PublicKey, error) {
	if key, err := jwt.ParseRSAPublicKeyFromPEM(raw); err == nil {
		return key, nil
	}
	if key, err := jwt.ParseECPublicKeyFromPEM(raw); err == nil {
		return key, nil
	}
	if key, err := jwt.ParseEdPublicKeyFromPEM(raw); err == nil {
		return key, nil
	}
	return nil, errors.New("no RSA, ECDSA or Ed25519 public key in it")
}

// Verify checks the token's signature, issuer, audience and times, and reads
// the company from its claim.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (Caller, error) {
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.keys(ctx)); err != nil {
		// The issuer's outage, or the request's end, are not the token's
		// fault: they keep their own code.
		var outage *apperr.Error
		if errors.As(err, &outage) {
			return Caller{}, outage
		}
		if ctx.Err() != nil {
			return Caller{}, ctx.Err()
		}
		return Caller{}, invalid("token refused: %v", err)
	}
	claim, _ := claims[v.opts.CompanyClaim].(string)
	company, err := uuid.Parse(claim)
	if err != nil || company == uuid.Nil {
		return Caller{}, invalid("the token's %q claim is not a company's UUID", v.opts.CompanyClaim)
	}
	name, _ := claims.GetSubject()
	if name == "" {
		name = "(token without subject)"
	}
	return Caller{Company: company, Name: name, MayWrite: scoped(claims, "write")}, nil
}

// scoped reports whether the token grants scope: in its "scope" claim, a
// space-separated list (OAuth 2.0, RFC 8693), or "scp", a list or a string
// (as some issuers write it). A token that says nothing may read only.
func scoped(claims jwt.MapClaims, scope string) bool {
	for _, name := range []string{"scope", "scp"} {
		switch v := claims[name].(type) {
		case string:
			if slices.Contains(strings.Fields(v), scope) {
				return true
			}
		case []any:
			for _, s := range v {
				if s == scope {
					return true
				}
			}
		}
	}
	return false
}
