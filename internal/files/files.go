// Package files keeps the evidence of an inventory, its signed PDF and its
// item photos, in blob storage: a folder under the data directory by
// default, or S3-compatible storage named by URL (GCS and Azure in builds
// with their tags).
package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/storageref"
)

// unbuiltStores are the stores whose large SDKs the default build leaves out
// (they would double the binary and the modules a cold build fetches), by
// scheme, with the build tag that puts each in; stores_*.go remove what
// their tag built.
var unbuiltStores = map[string]string{"gs": "gcs", "azblob": "azblob"}

// openCloud opens the stores of the tagged builds (stores_gocloud.go).
var openCloud func(ctx context.Context, url string) (bucket, error)

func scheme(url string) string {
	s, _, _ := strings.Cut(url, "://")
	return strings.ToLower(s)
}

// Store is the blob store.
type Store struct {
	bucket bucket
	signer *signer // set for local folders, whose URLs this service signs and serves
	ttl    time.Duration
	// name says which store this is in what clients are told: its kind,
	// and an object store's bucket (a folder's path is the server's own).
	name   string
	health health
}

// Options configure Open.
type Options struct {
	// URL names the store: "" for DataDir/blobs, file:///path, mem://,
	// s3://bucket?region=...&endpoint=...&use_path_style=true, and in
	// tagged builds gs://bucket and azblob://container.
	URL     string
	DataDir string
	// SigningKey signs the photo URLs of local stores.
	SigningKey []byte
	// URLTTL is how long a photo URL stays valid.
	URLTTL time.Duration
}

// Open opens the store.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.URLTTL <= 0 {
		opts.URLTTL = 15 * time.Minute
	}
	s := &Store{ttl: opts.URLTTL, name: "local folder"}
	var err error
	switch sch := scheme(opts.URL); {
	case opts.URL == "":
		s.bucket, err = openFolder(filepath.Join(opts.DataDir, "blobs"))
	case sch == "file":
		dir := strings.TrimPrefix(opts.URL, "file://")
		if dir == "" || !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("files: %q does not name an absolute folder (file:///path)", opts.URL)
		}
		s.bucket, err = openFolder(dir)
	case sch == "mem":
		s.bucket, s.name = &memory{files: map[string]memoryFile{}}, "memory"
	case sch == "s3":
		var b *s3Bucket
		b, err = openS3(opts.URL)
		if err == nil {
			s.bucket, s.name = b, fmt.Sprintf("s3 bucket %q", b.name)
		}
	case unbuiltStores[sch] != "":
		return nil, fmt.Errorf("files: this binary was built without %s:// stores: build it with -tags %s (see the README)", sch, unbuiltStores[sch])
	case openCloud != nil && (sch == "gs" || sch == "azblob"):
		s.bucket, err = openCloud(ctx, opts.URL)
		s.name = sch + " bucket"
	default:
		return nil, fmt.Errorf("files: unknown store %q: use s3://, file://, mem://, gs:// or azblob://", opts.URL)
	}
	if err != nil {
		return nil, err
	}
	if opts.URL == "" || strings.HasPrefix(opts.URL, "file://") || strings.HasPrefix(opts.URL, "mem://") {
		if len(opts.SigningKey) < 16 {
			return nil, errors.New("files: a signing key of at least 16 bytes is required for local stores")
		}
		s.signer = &signer{key: opts.SigningKey}
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.bucket.close() }

// PDFKey is where an inventory's signed PDF is stored.
func PDFKey(inventory string) string { return "pdf/" + inventory + ".pdf" }

// PhotoKey is where a photo is stored.
func PhotoKey(reference string) (string, error) {
	if !storageref.Valid(reference) {
		return "", apperr.InvalidField("storageReference", "%q is not a photo file name", reference)
	}
	return "photos/" + reference, nil
}

// ThumbnailKey is where the thumbnail of a photo whose SHA-256 (hex) is
// original is kept. Named by the original's digest rather than recorded in
// the database: no schema change, a photo changed since its digest was
// recorded can never be shown by an old thumbnail, and two photos with the
// same bytes share one.
func ThumbnailKey(original string) (string, error) {
	if len(original) != sha256.Size*2 || strings.Trim(original, "0123456789abcdef") != "" {
		return "", fmt.Errorf("files: %q is not a SHA-256 in lowercase hex", original)
	}
	return "thumbnails/" + original + ".jpg", nil
}

// ContentType is the media type of a stored file, by its extension.
func ContentType(key string) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(key))); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Put stores data under key and returns its SHA-256 (hex), which callers
// record so that a client can prove the file has not changed since. A store
// that refuses writes (full, read-only) is UNAVAILABLE, naming the store.
func (s *Store) Put(ctx context.Context, key string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	if err := s.wrote(key, s.bucket.write(ctx, key, bytes.NewReader(data), int64(len(data)), ContentType(key))); err != nil {
		return "", err
	}
	return hex.EncodeToString(sum[:]), nil
}

// PutFrom stores what r holds (size bytes, or -1 when unknown) under key as
// it reads it, never holding it whole (an upload is already held once, by
// the transport), and returns its SHA-256 (hex). A read error leaves nothing
// under key. A store that refuses writes is UNAVAILABLE, as with Put.
func (s *Store) PutFrom(ctx context.Context, key string, r io.Reader, size int64) (string, error) {
	hash := sha256.New()
	if err := s.wrote(key, s.bucket.write(ctx, key, io.TeeReader(r, hash), size, ContentType(key))); err != nil {
		return "", err
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

// Delete removes key (a missing one is no error).
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.bucket.remove(ctx, key); err != nil {
		return fmt.Errorf("files: deleting %s: %w", key, err)
	}
	return nil
}

// Get reads a whole stored file (for tests and exports).
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return io.ReadAll(obj)
}

// Open opens a stored file to read it as a stream; one that is missing is
// NotFound.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.open(ctx, key)
}

// List calls each for every stored key under prefix ("pdf/", "photos/"), in
// no set order.
func (s *Store) List(ctx context.Context, prefix string, each func(key string) error) error {
	return s.Walk(ctx, prefix, func(e Entry) error { return each(e.Key) })
}

// Walk calls each for every stored file under prefix, with when it was
// written, in no set order.
func (s *Store) Walk(ctx context.Context, prefix string, each func(Entry) error) error {
	return s.bucket.list(ctx, prefix, func(e Entry) error {
		if path.Base(e.Key) == probeName {
			return nil // Refusing's, for a moment
		}
		return each(e)
	})
}

// Leftovers calls each for the temporary files of writes that never
// finished (a process killed mid-write), wherever they are: a walk of the
// whole store. Only a local folder has any: an object store's put is whole
// or absent (an S3 multipart upload left unfinished is the bucket's
// lifecycle rule's to abort).
func (s *Store) Leftovers(ctx context.Context, each func(Entry) error) error {
	if f, ok := s.bucket.(*folder); ok {
		return f.temporaries(ctx, true, each)
	}
	return nil
}

// RemoveTemporaries removes the temporary files of unfinished writes last
// written before cutoff, from the one folder writes keep them in (no walk of
// the store: the start calls it), and returns how many it removed. A write
// in flight, of this process or of another sharing the folder, is younger
// than any cutoff an hour back.
func (s *Store) RemoveTemporaries(ctx context.Context, cutoff time.Time) (int, error) {
	f, ok := s.bucket.(*folder)
	if !ok {
		return 0, nil
	}
	removed := 0
	err := f.temporaries(ctx, false, func(e Entry) error {
		if !e.Modified.Before(cutoff) {
			return nil
		}
		if err := f.remove(ctx, e.Key); err != nil {
			return err
		}
		removed++
		return nil
	})
	return removed, err
}

// open opens a stored file, a missing one being NotFound.
func (s *Store) open(ctx context.Context, key string) (object, error) {
	obj, err := s.bucket.open(ctx, key)
	if errors.Is(err, errNotFound) {
		return nil, apperr.Errorf(apperr.NotFound, "file %s not found", path.Base(key))
	}
	if err != nil {
		return nil, fmt.Errorf("files: opening %s: %w", key, err)
	}
	return obj, nil
}

// streamTimeout bounds reading one stored file while it is sent.
const streamTimeout = 5 * time.Minute

// Download describes a file to serve.
type Download struct {
	Key string
	// SHA256 is the recorded digest: the ETag, when known.
	SHA256 string
	// Filename, when set, makes the response an attachment of that name.
	Filename string
	// Modified is the Last-Modified time; the store's own when zero.
	Modified time.Time
	// CacheControl is sent as is; when empty, the server's default
	// (no-store, internal/server) stands.
	CacheControl string
}

// Serve streams a stored file with its content type, ETag and Last-Modified,
// answering Range, conditional (304) and HEAD requests.
func (s *Store) Serve(w http.ResponseWriter, r *http.Request, d Download) error {
	// The request's deadline bounds the lookups before a download, not the
	// download: a large file to a slow client may take longer, and a cloud
	// store's reader stops with its context. A client gone ends it (writes
	// fail), so does the server's write timeout, and so does streamTimeout.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), streamTimeout)
	defer cancel()
	reader, err := s.open(ctx, d.Key)
	if err != nil {
		return err
	}
	defer reader.Close()
	h := w.Header()
	describe(h, d.Key, d.SHA256, d.Filename)
	if d.CacheControl != "" {
		h.Set("Cache-Control", d.CacheControl)
	}
	modified := d.Modified
	if modified.IsZero() {
		modified = reader.modTime()
	}
	http.ServeContent(w, withoutManyRanges(r), path.Base(d.Key), modified, reader)
	return nil
}

// ServeRendered sends a document rendered for this request and not stored
// (a comparison report), as an attachment named filename, with what Serve
// states of a stored file: its type, its SHA-256 (ETag, Repr-Digest), and
// Range and conditional requests answered.
func ServeRendered(w http.ResponseWriter, r *http.Request, filename string, data []byte) {
	sum := sha256.Sum256(data)
	ServeData(w, r, Download{Key: filename, SHA256: hex.EncodeToString(sum[:]), Filename: filename}, data)
}

// ServeData sends data, a document held in memory, as Serve sends the
// stored file d describes: the same headers, Range and conditional requests
// answered. A2 sends a signed PDF it has just rendered this way, whether or
// not the store could keep it.
func ServeData(w http.ResponseWriter, r *http.Request, d Download, data []byte) {
	h := w.Header()
	describe(h, d.Key, d.SHA256, d.Filename)
	if d.CacheControl != "" {
		h.Set("Cache-Control", d.CacheControl)
	}
	http.ServeContent(w, withoutManyRanges(r), path.Base(d.Key), d.Modified, bytes.NewReader(data))
}

// describe states what a download is: its media type (by key's extension),
// its SHA-256 when known, and, with a filename, that it is an attachment.
func describe(h http.Header, key, sha256Hex, filename string) {
	h.Set("Content-Type", ContentType(key))
	h.Set("X-Content-Type-Options", "nosniff")
	if sha256Hex != "" {
		h.Set("ETag", `"`+sha256Hex+`"`)
		if digest, err := hex.DecodeString(sha256Hex); err == nil {
			// RFC 9530: the digest of the whole file, on a range's answer too,
			// so a client can check what it put together.
			h.Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(digest)+":")
		}
	}
	if filename != "" {
		h.Set("Content-Disposition", attachment(filename))
	}
}

// MaxRanges is the most byte ranges one request may ask for. A request for
// more gets the whole file (200), as Apache's MaxRanges does: RFC 9110
// section 14.2 lets a server ignore Range, and a client that asked for many
// parts of a file can use all of it, whereas a 416 would fail downloaders
// that split a file into many parts. http.ServeContent already ignores
// ranges that add up to more than the file; but each part of a multipart
// answer carries ~100 bytes of its own headers, so thousands of one-byte
// ranges (bytes=0-0,1-1,...) made an answer 137 times the file's size. With
// at most 16 parts that overhead is under 2 KiB.
const MaxRanges = 16

// withoutManyRanges returns r without its Range header when it asks for more
// than MaxRanges ranges, else r itself.
func withoutManyRanges(r *http.Request) *http.Request {
	h := r.Header.Get("Range")
	if strings.Count(h, ",") < MaxRanges {
		return r
	}
	// A copy: a handler does not change the request it was given.
	r = r.Clone(r.Context())
	r.Header.Del("Range")
	return r
}

// attachment is a Content-Disposition with an ASCII filename for old clients
// and the exact UTF-8 name in filename* (RFC 6266).
func attachment(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r >= 0x20 && r < 0x7f && r != '"' && r != '\\' {
			return r
		}
		if base, ok := unaccented[r]; ok {
			return base
		}
		return '_'
	}, name)
	return fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, ascii, pathEscape(name))
}

var unaccented = map[rune]rune{'á': 'a', 'é': 'e', 'í': 'i', 'ó': 'o', 'ú': 'u', 'ñ': 'n', 'ü': 'u',
	'Á': 'A', 'É': 'E', 'Í': 'I', 'Ó': 'O', 'Ú': 'U', 'Ñ': 'N', 'Ü': 'U'}

// pathEscape percent-encodes everything but RFC 5987's attr-chars.
func pathEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Digest is the SHA-256 (hex) of a stored file, read as a stream: a large
// file never sits in memory whole.
func (s *Store) Digest(ctx context.Context, key string) (string, error) {
	obj, err := s.open(ctx, key)
	if err != nil {
		return "", err
	}
	defer obj.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, obj); err != nil {
		return "", fmt.Errorf("files: reading %s: %w", key, err)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}
