package files_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/files"
)

// A cloud store hands out the provider's own signed URLs. S3 presigning needs
// no network, so this runs against a loopback endpoint nobody serves.
func TestCloudStoresGiveTheProvidersSignedURLs(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := files.Open(context.Background(), files.Options{URL: "s3://evidence?region=us-east-1&endpoint=http://127.0.0.1:9&use_path_style=true"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := s.PhotoURL(context.Background(), "http://unused", "a-1.jpg", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "127.0.0.1:9" || !strings.HasSuffix(u.Path, "/evidence/photos/a-1.jpg") ||
		u.Query().Get("X-Amz-Signature") == "" || u.Query().Get("X-Amz-Expires") != "900" {
		t.Errorf("got %s, want an S3 presigned URL for photos/a-1.jpg valid 15 minutes", raw)
	}
	if _, err := s.PhotoURL(context.Background(), "", "../x.jpg", time.Now()); err == nil {
		t.Error("a reference with a path: got a URL")
	}
}
