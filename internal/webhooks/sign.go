package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// secretPrefix starts every secret, as Standard Webhooks writes them: the
// rest is the base64 of the key's bytes.
const secretPrefix = "whsec_"

// secretBytes is the key's length: Standard Webhooks asks for 24 to 64.
const secretBytes = 32

// newSecret is a new signing secret, whsec_ and base64 of random bytes.
func newSecret() string {
	key := make([]byte, secretBytes)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return secretPrefix + base64.StdEncoding.EncodeToString(key)
}

// key is a secret's bytes.
func key(secret string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhooks: a secret that is not whsec_ and base64: %w", err)
	}
	return b, nil
}

// Signature is the webhook-signature header of a delivery: a "v1,"
// signature for each secret, space-separated (the current one first; the
// previous one too while a rotation's overlap lasts), each the base64 of
// HMAC-SHA256 of "id.timestamp.body" with the secret's bytes.
func Signature(id string, at time.Time, body []byte, secrets ...string) (string, error) {
	signed := []byte(id + "." + strconv.FormatInt(at.Unix(), 10) + ".")
	signed = append(signed, body...)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		k, err := key(s)
		if err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, k)
		mac.Write(signed)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}
