package files_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
)

// s3Credentials are what the store signs with: the S3 protocol server here
// does not check signatures, the presigning test reads them.
func s3Credentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
}

// A cloud store hands out the provider's own signed URLs. S3 presigning needs
// no network, so this runs against a loopback endpoint nobody serves.
func TestCloudStoresGiveTheProvidersSignedURLs(t *testing.T) {
	s3Credentials(t)
	s, err := files.Open(context.Background(), files.Options{URL: "s3://evidence?region=us-east-1&endpoint=http://127.0.0.1:9&use_path_style=true"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := s.PhotoURL(context.Background(), "http://unused", "a-1.jpg", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "127.0.0.1:9" || !strings.HasSuffix(u.Path, "/evidence/photos/a-1.jpg") ||
		u.Query().Get("X-Amz-Signature") == "" || u.Query().Get("X-Amz-Expires") != "900" ||
		!strings.HasPrefix(u.Query().Get("X-Amz-Credential"), "AKIDEXAMPLE/") {
		t.Errorf("got %s, want an S3 presigned URL for photos/a-1.jpg valid 15 minutes", raw)
	}
	if _, err := s.PhotoURL(context.Background(), "", "../x.jpg", "", time.Now()); err == nil {
		t.Error("a reference with a path: got a URL")
	}
}

// The S3 store against a server speaking the S3 protocol over real HTTP:
// what is put reads back whole and by range, a missing key is NotFound, a
// listing holds what was put, and a presigned URL downloads the photo.
func TestS3StoresKeepAndServeFiles(t *testing.T) {
	s3Credentials(t)
	backend := s3mem.New()
	if err := backend.CreateBucket("evidence"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	ctx := context.Background()
	s, err := files.Open(ctx, files.Options{URL: "s3://evidence?region=us-east-1&use_path_style=true&endpoint=" + url.QueryEscape(srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	photo := []byte("\xff\xd8\xff a photo of the kitchen")
	key, _ := files.PhotoKey("a-1.jpg")
	sum, err := s.Put(ctx, key, photo)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, key); err != nil || string(got) != string(photo) {
		t.Fatalf("read back %q, %v; want what was put", got, err)
	}
	if _, err := s.Get(ctx, files.PDFKey("missing")); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("a missing key: %v, want NotFound", err)
	}

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/photo", nil)
	req.Header.Set("Range", "bytes=4-8")
	if err := s.Serve(rec, req, files.Download{Key: key, SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusPartialContent || rec.Body.String() != string(photo[4:9]) || rec.Header().Get("Content-Type") != "image/jpeg" {
		t.Errorf("range: %d %q %q, want 206 %q image/jpeg", rec.Code, rec.Body.String(), rec.Header().Get("Content-Type"), photo[4:9])
	}

	raw, err := s.PhotoURL(ctx, "", "a-1.jpg", sum, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != string(photo) {
		t.Errorf("presigned download: %d %q", resp.StatusCode, body)
	}

	var keys []string
	if err := s.List(ctx, "photos/", func(k string) error { keys = append(keys, k); return nil }); err != nil || len(keys) != 1 || keys[0] != key {
		t.Errorf("listed %v, %v; want [%s]", keys, err, key)
	}
}

// s3:// URLs with a parameter the store does not know are refused, not
// half-understood.
func TestS3URLsWithUnknownParametersAreRefused(t *testing.T) {
	for _, raw := range []string{
		"s3://evidence?regoin=eu-west-1",
		"s3://evidence?endpoint=minio:9000",
		"s3://evidence?use_path_style=maybe",
		"s3:///no-bucket",
	} {
		if _, err := files.Open(context.Background(), files.Options{URL: raw}); err == nil {
			t.Errorf("%s: opened", raw)
		}
	}
}
