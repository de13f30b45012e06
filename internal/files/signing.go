package files

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// PhotoPath is where this service serves photos of local stores; the
// reference follows it.
const PhotoPath = "/files/photos/"

// signer signs photo URLs of local stores: HMAC-SHA256 over the key and the
// expiry, so a URL cannot be altered or used after it expires.
type signer struct{ key []byte }

func (s *signer) sign(key string, expires int64, digest string) string {
	mac := hmac.New(sha256.New, s.key)
	fmt.Fprintf(mac, "%s\n%d\n%s", key, expires, digest)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// PhotoURL is a URL that downloads the photo for a limited time: signed by
// this service under baseURL for local stores, the provider's own signed URL
// for cloud stores. digest, the photo's recorded SHA-256 when known, is
// signed into a local store's URL, whose download then states it (ETag,
// Repr-Digest) without a database lookup.
func (s *Store) PhotoURL(ctx context.Context, baseURL, reference, digest string, now time.Time) (string, error) {
	key, err := PhotoKey(reference)
	if err != nil {
		return "", err
	}
	if s.signer == nil {
		return s.bucket.signedURL(ctx, key, s.ttl)
	}
	expires := now.Add(s.ttl).Unix()
	q := url.Values{"expires": {strconv.FormatInt(expires, 10)}, "signature": {s.signer.sign(key, expires, digest)}}
	if digest != "" {
		q.Set("sha256", digest)
	}
	return baseURL + PhotoPath + url.PathEscape(reference) + "?" + q.Encode(), nil
}

// ServeSignedPhoto serves a photo of a local store to the holder of a valid
// URL from PhotoURL: 403 when the signature is wrong or expired.
func (s *Store) ServeSignedPhoto(w http.ResponseWriter, r *http.Request, reference string, now time.Time) error {
	key, err := PhotoKey(reference)
	if err != nil {
		return apperr.Errorf(apperr.NotFound, "no photo %q", reference)
	}
	if s.signer == nil {
		return apperr.Errorf(apperr.NotFound, "photos are served by the storage provider")
	}
	q := r.URL.Query()
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	digest := q.Get("sha256")
	if err != nil || !hmac.Equal([]byte(q.Get("signature")), []byte(s.signer.sign(key, expires, digest))) {
		return apperr.Errorf(apperr.Forbidden, "the photo URL is not valid: ask for a new one")
	}
	if now.Unix() > expires {
		return apperr.Errorf(apperr.Forbidden, "the photo URL expired: ask for a new one")
	}
	maxAge := max(expires-now.Unix(), 0)
	return s.Serve(w, r, Download{Key: key, SHA256: digest, CacheControl: fmt.Sprintf("private, max-age=%d", maxAge)})
}
