package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// `inventoryd verify` passes on generated data with its files, makes a
// thumbnail that is gone, and fails naming the file after one stored byte
// is changed, and after one is gone.
func TestVerifyFindsAChangedByteAndAMissingFile(t *testing.T) {
	url, data := testdb.URL(t), t.TempDir()
	if _, _, err := runCommand(t, url, data, "", "generate", "--seed", "5", "--companies", "1", "--properties", "2",
		"--inventories", "2", "--environments", "1-2", "--items", "1-3", "--photos", "1", "--files"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCommand(t, url, data, "", "verify")
	counts := regexp.MustCompile(`checked ([1-9][0-9]*) PDFs and ([1-9][0-9]*) photos: 0 changed, 0 missing`)
	if err != nil || !counts.MatchString(out) {
		t.Fatalf("verify on untouched files: %q, %v", out, err)
	}

	// A thumbnail gone (or one never made) is made again from its photo:
	// derived, not evidence, it is no reason to fail.
	thumbs, err := filepath.Glob(filepath.Join(data, "blobs", "thumbnails", "*.jpg"))
	if err != nil || len(thumbs) == 0 {
		t.Fatalf("kept thumbnails: %v, %v", thumbs, err)
	}
	if err := os.Remove(thumbs[0]); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCommand(t, url, data, "", "verify")
	if err != nil || !strings.Contains(out, "0 changed, 0 missing; 1 thumbnails made") {
		t.Errorf("verify without a thumbnail: %q, %v; want it made", out, err)
	}
	if _, err := os.Stat(thumbs[0]); err != nil {
		t.Errorf("the thumbnail was not made again: %v", err)
	}

	photos, err := filepath.Glob(filepath.Join(data, "blobs", "photos", "*"))
	if err != nil || len(photos) < 2 {
		t.Fatalf("stored photos: %v, %v", photos, err)
	}
	changed, _ := os.ReadFile(photos[0])
	changed[len(changed)/2] ^= 1
	if err := os.WriteFile(photos[0], changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(photos[1]); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCommand(t, url, data, "", "verify")
	if err == nil || !strings.Contains(err.Error(), "2 stored file(s) do not match") {
		t.Errorf("verify after a change: err %v, want 2 files that do not match", err)
	}
	for _, want := range []string{
		"CHANGED  photos/" + filepath.Base(photos[0]),
		"MISSING  photos/" + filepath.Base(photos[1]),
		"1 changed, 1 missing",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify's report lacks %q:\n%s", want, out)
		}
	}
}
