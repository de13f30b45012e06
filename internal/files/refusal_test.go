package files_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
)

// A store that refuses writes is UNAVAILABLE naming the store, never
// INTERNAL; Refusing and WriteState say so until a write goes through, and
// the probe finds the store writable again once it is. The refusal here is
// the kernel's own: the photos folder replaced by a regular file, so that
// making it fails (EEXIST), which a test running as root meets as anyone
// does (chmod 0555 does not stop root; a full tmpfs needs a mount).
// ENOSPC, EROFS and the others are classified by the same table
// (TestSystemErrorsOfAFullOrReadOnlyFolderAreRefusals).
func TestAStoreThatRefusesWritesIsUnavailable(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	s, err := files.Open(ctx, files.Options{DataDir: dataDir, SigningKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	files.ProbeEvery(t, 50*time.Millisecond)
	if got := s.Refusing(ctx); got != "" {
		t.Fatalf("a new store refuses writes: %q", got)
	}
	photos := filepath.Join(dataDir, "blobs", "photos")
	if err := os.WriteFile(photos, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, "photos/a-1.jpg", jpeg)
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.Unavailable || !strings.Contains(e.Message, "blob store (local folder)") ||
		strings.Contains(e.Message, dataDir) {
		t.Fatalf("a write beneath a file: %v, want UNAVAILABLE naming the store and not its path", err)
	}
	if !errors.Is(err, errors.Unwrap(e)) || e.Cause == nil || !strings.Contains(e.Cause.Error(), "file exists") {
		t.Errorf("the cause kept for the log: %v", e.Cause)
	}
	if got := s.Refusing(ctx); got != files.RefusedUnusable {
		t.Errorf("Refusing: %q, want %q", got, files.RefusedUnusable)
	}
	if st := s.WriteState(); st.Reason != files.RefusedUnusable || st.Refused[files.RefusedUnusable] != 1 {
		t.Errorf("WriteState: %+v", st)
	}
	entries, _ := os.ReadDir(filepath.Join(dataDir, "blobs", ".tmp"))
	if len(entries) != 0 {
		t.Errorf("the refused write left %d temporary files", len(entries))
	}

	// Freed: the probe (at most every few seconds) finds it takes writes
	// without any client's write, and is not counted as a refused write.
	if err := os.Remove(photos); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Refusing(ctx) != "" {
		if time.Now().After(deadline) {
			t.Fatal("the store still reads as refusing writes 10 s after it was freed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := s.WriteState(); st.Reason != "" || st.Refused[files.RefusedUnusable] != 1 {
		t.Errorf("WriteState after the probe: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "blobs", "photos", ".write-probe")); !os.IsNotExist(err) {
		t.Errorf("the probe's file was left: %v", err)
	}
	if _, err := s.Put(ctx, "photos/a-1.jpg", jpeg); err != nil {
		t.Fatal(err)
	}
}

// Writes keep their temporary files in one folder of the store, so that
// what a killed process left is found without walking every photo; the
// start removes those an hour old, never a younger one (a write in flight,
// perhaps another instance's), and Leftovers also finds the ".tmp" files
// writes before that folder left beside their keys.
func TestTemporaryFilesOfUnfinishedWritesAreFoundAndRemoved(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	s, err := files.Open(ctx, files.Options{DataDir: dataDir, SigningKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(ctx, "photos/kept.jpg", jpeg); err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(dataDir, "blobs")
	old := time.Now().Add(-2 * time.Hour)
	write := func(name string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(blobs, name), []byte("half a photo"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(blobs, name), mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	write(".tmp/photos_a-1.jpg.41.1.tmp", old)
	write(".tmp/photos_a-2.jpg.41.2.tmp", time.Now())
	write("photos/a-3.jpg.40.3.tmp", old)

	var found []string
	if err := s.Leftovers(ctx, func(e files.Entry) error { found = append(found, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(found, " ") != ".tmp/photos_a-1.jpg.41.1.tmp .tmp/photos_a-2.jpg.41.2.tmp photos/a-3.jpg.40.3.tmp" {
		t.Errorf("Leftovers: %v", found)
	}
	var listed []string
	_ = s.List(ctx, "", func(k string) error { listed = append(listed, k); return nil })
	if strings.Join(listed, " ") != "photos/kept.jpg" {
		t.Errorf("List shows temporaries: %v", listed)
	}
	n, err := s.RemoveTemporaries(ctx, time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("RemoveTemporaries: %d, %v; want the one an hour old", n, err)
	}
	for name, want := range map[string]bool{".tmp/photos_a-1.jpg.41.1.tmp": false, ".tmp/photos_a-2.jpg.41.2.tmp": true,
		"photos/a-3.jpg.40.3.tmp": true, "photos/kept.jpg": true} {
		if _, err := os.Stat(filepath.Join(blobs, name)); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", name, err == nil, want)
		}
	}
}
