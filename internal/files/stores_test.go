//go:build !gcs && !azblob

package files_test

import (
	"context"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/files"
)

// The default build leaves out the stores whose SDKs are large, and says how
// to build them in rather than that it knows no such scheme.
func TestTheDefaultBuildNamesTheTagOfTheStoresItLeavesOut(t *testing.T) {
	for url, tag := range map[string]string{"gs://evidence": "-tags gcs", "azblob://evidence": "-tags azblob"} {
		_, err := files.Open(context.Background(), files.Options{URL: url})
		if err == nil || !strings.Contains(err.Error(), tag) {
			t.Errorf("%s: %v, want an error naming %s", url, err, tag)
		}
	}
}
