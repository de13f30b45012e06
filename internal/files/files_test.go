package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/files"
)

var key = []byte("a signing key of thirty-two bytes")

// stores returns the local-folder and in-memory stores, each with one photo and one PDF.
func stores(t *testing.T) map[string]*files.Store {
	t.Helper()
	out := map[string]*files.Store{}
	for name, opts := range map[string]files.Options{
		"local":  {DataDir: t.TempDir(), SigningKey: key},
		"memory": {URL: "mem://", SigningKey: key},
	} {
		s, err := files.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

// serve serves signed photos and one PDF the way the REST adapter does.
func serve(t *testing.T, s *files.Store, now func() time.Time) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc(files.PhotoPath+"{reference}", func(w http.ResponseWriter, r *http.Request) {
		if err := s.ServeSignedPhoto(w, r, r.PathValue("reference"), now()); err != nil {
			code := http.StatusNotFound
			if strings.Contains(err.Error(), "URL") {
				code = http.StatusForbidden
			}
			http.Error(w, err.Error(), code)
		}
	})
	mux.HandleFunc("/pdf", func(w http.ResponseWriter, r *http.Request) {
		err := s.Serve(w, r, files.Download{Key: files.PDFKey("inv"), SHA256: pdfSum, Filename: "inventario-desocupación.pdf",
			Modified: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)})
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var (
	pdfBody = []byte("%PDF-1.3 a stand-in of 40 bytes for a PDF")
	pdfSum  string
	jpeg    = []byte("\xff\xd8\xff\xe0 not really a JPEG, but stored as one")
)

func put(t *testing.T, s *files.Store) {
	t.Helper()
	var err error
	if pdfSum, err = s.Put(context.Background(), files.PDFKey("inv"), pdfBody); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(pdfBody)
	if pdfSum != hex.EncodeToString(want[:]) {
		t.Fatalf("Put: got digest %s, want the SHA-256 of the data", pdfSum)
	}
	photoKey, _ := files.PhotoKey("a-1.jpg")
	if _, err := s.Put(context.Background(), photoKey, jpeg); err != nil {
		t.Fatal(err)
	}
}

// get follows redirects (the mux answers paths with ".." by redirecting to
// the cleaned path) and asks for no compression, so bodies are as stored.
func get(t *testing.T, u string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "identity")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func TestSignedPhotoURLs(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			put(t, s)
			now := time.Now()
			srv := serve(t, s, func() time.Time { return now })
			digest := sha256.Sum256(jpeg)
			photoURL, err := s.PhotoURL(context.Background(), srv.URL, "a-1.jpg", hex.EncodeToString(digest[:]), now)
			if err != nil {
				t.Fatal(err)
			}
			res, body := get(t, photoURL, nil)
			if res.StatusCode != http.StatusOK || !bytes.Equal(body, jpeg) || res.Header.Get("Content-Type") != "image/jpeg" ||
				res.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(res.Header.Get("Cache-Control"), "private, max-age=") {
				t.Errorf("valid URL: got %d %q %v", res.StatusCode, body, res.Header)
			}
			// The recorded digest, signed into the URL, is stated as RFC 9530 has it.
			if got, want := res.Header.Get("Repr-Digest"), "sha-256=:"+base64.StdEncoding.EncodeToString(digest[:])+":"; got != want {
				t.Errorf("Repr-Digest %q, want %q", got, want)
			}

			u, _ := url.Parse(photoURL)
			q := u.Query()
			tampered := []url.Values{
				{"expires": q["expires"], "signature": {q.Get("signature")[1:] + "A"}},
				{"expires": {"9999999999"}, "signature": q["signature"]},
				{"expires": q["expires"]},
				// A digest of the client's choosing would be stated as the record's.
				{"expires": q["expires"], "signature": q["signature"], "sha256": {strings.Repeat("0", 64)}},
			}
			for _, tq := range tampered {
				u.RawQuery = tq.Encode()
				if res, _ := get(t, u.String(), nil); res.StatusCode != http.StatusForbidden {
					t.Errorf("tampered %v: got %d, want 403", tq, res.StatusCode)
				}
			}
			// The signature binds the file: another photo's name with this signature is refused.
			other := strings.Replace(photoURL, "a-1.jpg", "a-2.jpg", 1)
			if res, _ := get(t, other, nil); res.StatusCode != http.StatusForbidden {
				t.Errorf("signature moved to another photo: got %d, want 403", res.StatusCode)
			}
			now = now.Add(16 * time.Minute)
			if res, _ := get(t, photoURL, nil); res.StatusCode != http.StatusForbidden {
				t.Errorf("expired URL: got %d, want 403", res.StatusCode)
			}
		})
	}
}

func TestReferencesCannotLeaveThePhotoFolder(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			put(t, s)
			srv := serve(t, s, time.Now)
			for _, ref := range []string{"../pdf/inv.pdf", "..%2Fpdf%2Finv.pdf", "%2Fetc%2Fpasswd", "a-1.jpg%2F..%2F..%2Fpdf%2Finv.pdf", "..", ".jpg", "a.pdf"} {
				res, body := get(t, srv.URL+files.PhotoPath+ref+"?expires=9999999999&signature=x", nil)
				if res.StatusCode != http.StatusNotFound || bytes.Contains(body, pdfBody) {
					t.Errorf("%s: got %d %q, want 404", ref, res.StatusCode, body)
				}
			}
			for _, ref := range []string{"../x.jpg", "/etc/x.jpg", "a/b.jpg", "a\\b.jpg"} {
				if _, err := files.PhotoKey(ref); err == nil {
					t.Errorf("PhotoKey(%q): got no error", ref)
				}
			}
			// A stored reference that was never written is a 404, not a 500.
			missing, _ := s.PhotoURL(context.Background(), srv.URL, "missing.jpg", "", time.Now())
			if res, _ := get(t, missing, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("missing photo: got %d, want 404", res.StatusCode)
			}
		})
	}
}

func TestDownloadsAnswerRangeAndConditionalRequests(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			put(t, s)
			srv := serve(t, s, time.Now)
			res, body := get(t, srv.URL+"/pdf", nil)
			etag := res.Header.Get("ETag")
			if res.StatusCode != http.StatusOK || !bytes.Equal(body, pdfBody) || etag != `"`+pdfSum+`"` ||
				res.Header.Get("Content-Type") != "application/pdf" || res.Header.Get("Last-Modified") != "Wed, 01 May 2024 12:00:00 GMT" {
				t.Fatalf("GET: %d %v", res.StatusCode, res.Header)
			}
			want := `attachment; filename="inventario-desocupacion.pdf"; filename*=UTF-8''inventario-desocupaci%C3%B3n.pdf`
			if got := res.Header.Get("Content-Disposition"); got != want {
				t.Errorf("Content-Disposition: got %s, want %s", got, want)
			}
			res, body = get(t, srv.URL+"/pdf", http.Header{"Range": {"bytes=4-7"}})
			if res.StatusCode != http.StatusPartialContent || string(body) != "-1.3" || res.Header.Get("Content-Range") != "bytes 4-7/41" {
				t.Errorf("Range: got %d %q %s", res.StatusCode, body, res.Header.Get("Content-Range"))
			}
			if res, _ := get(t, srv.URL+"/pdf", http.Header{"If-None-Match": {etag}}); res.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match: got %d, want 304", res.StatusCode)
			}
			if res, _ := get(t, srv.URL+"/pdf", http.Header{"If-Modified-Since": {"Thu, 02 May 2024 00:00:00 GMT"}}); res.StatusCode != http.StatusNotModified {
				t.Errorf("If-Modified-Since: got %d, want 304", res.StatusCode)
			}
			if res, body := get(t, srv.URL+"/pdf", http.Header{"If-None-Match": {`"other"`}}); res.StatusCode != http.StatusOK || len(body) != len(pdfBody) {
				t.Errorf("stale ETag: got %d, want 200 with the file", res.StatusCode)
			}
		})
	}
}

// ranges is a Range header asking for each of the first n bytes on its own.
func ranges(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%d-%d", i, i)
	}
	return "bytes=" + strings.Join(parts, ",")
}

// Thousands of one-byte ranges made a multipart answer 137 times the file:
// each part carries its own headers. Past MaxRanges the whole file is sent.
func TestManyRangesGetTheWholeFileOnce(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 1000) // 10 000 bytes
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := s.Put(context.Background(), files.PDFKey("big"), big); err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
				if err := s.Serve(w, r, files.Download{Key: files.PDFKey("big")}); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
				}
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			res, body := get(t, srv.URL+"/big", http.Header{"Range": {ranges(5000)}})
			if res.StatusCode != http.StatusOK || !bytes.Equal(body, big) {
				t.Errorf("5000 ranges: got %d with %d bytes, want 200 and the file's %d bytes once", res.StatusCode, len(body), len(big))
			}
			res, body = get(t, srv.URL+"/big", http.Header{"Range": {ranges(files.MaxRanges + 1)}})
			if res.StatusCode != http.StatusOK || len(body) != len(big) {
				t.Errorf("%d ranges: got %d with %d bytes, want 200 and the file", files.MaxRanges+1, res.StatusCode, len(body))
			}
			// Up to the limit, ranges are answered, and cost little beyond the file.
			res, body = get(t, srv.URL+"/big", http.Header{"Range": {ranges(files.MaxRanges)}})
			if res.StatusCode != http.StatusPartialContent || !strings.HasPrefix(res.Header.Get("Content-Type"), "multipart/byteranges") ||
				len(body) > len(big)+2048 || strings.Count(string(body), "Content-Range: bytes ") != files.MaxRanges {
				t.Errorf("%d ranges: got %d %s with %d bytes, want 206 with %d parts", files.MaxRanges, res.StatusCode, res.Header.Get("Content-Type"), len(body), files.MaxRanges)
			}
		})
	}
}

// The local folder store reads the folders gocloud's fileblob wrote before
// it (the same paths, plus .attrs side files it ignores), lists only stored
// files, and leaves no temporary file behind a write.
func TestLocalStoresReadTheFoldersTheyWroteBefore(t *testing.T) {
	dataDir := t.TempDir()
	photos := filepath.Join(dataDir, "blobs", "photos")
	if err := os.MkdirAll(photos, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(photos, "old.jpg"), []byte("an old photo"), 0o644)
	os.WriteFile(filepath.Join(photos, "old.jpg.attrs"), []byte(`{"user.content_type":"image/jpeg"}`), 0o644)
	s, err := files.Open(context.Background(), files.Options{DataDir: dataDir, SigningKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Get(context.Background(), "photos/old.jpg"); err != nil || string(got) != "an old photo" {
		t.Errorf("an earlier photo: %q, %v", got, err)
	}
	if _, err := s.Put(context.Background(), "photos/new.jpg", []byte("a new photo")); err != nil {
		t.Fatal(err)
	}
	var listed []string
	if err := s.List(context.Background(), "photos/", func(k string) error { listed = append(listed, k); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(listed)
	if strings.Join(listed, " ") != "photos/new.jpg photos/old.jpg" {
		t.Errorf("listed %v, want the two photos only", listed)
	}
	entries, _ := os.ReadDir(photos)
	if len(entries) != 3 {
		t.Errorf("the folder holds %d entries, want the two photos and the old side file", len(entries))
	}
}
