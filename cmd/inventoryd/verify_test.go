package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
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

// What a process killed mid-upload leaves in the blob store: a photo stored
// whose record never committed (with its thumbnail), the temporary file of
// a write that never finished (in the writes' folder, or beside its key as
// writes before it left them), and a PDF of no inventory. verify lists each,
// passes (the evidence is whole), and says --repair removes them; --repair
// removes those over an hour old and leaves the younger ones (a write may
// be under way) and every file a record names; a row whose file is gone is
// MISSING, with a digest recorded or not.
func TestVerifyFindsAndRepairsFilesNoRecordNames(t *testing.T) {
	url, data := testdb.URL(t), t.TempDir()
	if _, _, err := runCommand(t, url, data, "", "generate", "--seed", "5", "--companies", "1", "--properties", "2",
		"--inventories", "2", "--environments", "1-2", "--items", "1-3", "--photos", "1", "--files"); err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(data, "blobs")
	before, err := filepath.Glob(filepath.Join(blobs, "*", "*"))
	if err != nil || len(before) < 4 {
		t.Fatalf("stored: %v, %v", before, err)
	}
	old := time.Now().Add(-2 * time.Hour)
	write := func(name string, content []byte, mod time.Time) {
		t.Helper()
		p := filepath.Join(blobs, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	// A stray photo: a copy of a stored one under an id no record has, so
	// its thumbnail is shared with a record's and stays; and a stray of
	// bytes of its own, whose thumbnail goes with it.
	photos, _ := filepath.Glob(filepath.Join(blobs, "photos", "*.jpg"))
	shared, _ := os.ReadFile(photos[0])
	sharedSum := sha256.Sum256(shared)
	strayPhoto := "photos/" + uuid.NewString() + ".jpg"
	write(strayPhoto, shared, old)
	own := append(append([]byte(nil), shared...), 0) // a byte past the JPEG's end: other bytes, the same image
	ownSum := sha256.Sum256(own)
	ownPhoto := "photos/" + uuid.NewString() + ".jpg"
	write(ownPhoto, own, old)
	ownThumb := "thumbnails/" + hex.EncodeToString(ownSum[:]) + ".jpg"
	write(ownThumb, []byte("its thumbnail"), old)
	strayPDF := "pdf/" + uuid.NewString() + ".pdf"
	write(strayPDF, []byte("%PDF-1.3 of no inventory"), old)
	youngPhoto := "photos/" + uuid.NewString() + ".jpg"
	write(youngPhoto, shared, time.Now())
	half := ".tmp/photos_" + uuid.NewString() + ".jpg.4242.1.tmp"
	write(half, shared[:len(shared)/2], old)
	beside := strings.TrimPrefix(photos[1], blobs+"/") + ".4241.2.tmp"
	write(beside, shared[:10], old)
	youngHalf := ".tmp/photos_" + uuid.NewString() + ".jpg.4243.3.tmp"
	write(youngHalf, shared[:10], time.Now())

	out, _, err := runCommand(t, url, data, "", "verify")
	if err != nil {
		t.Fatalf("verify with strays: %v\n%s", err, out)
	}
	for _, want := range []string{
		"UNNAMED  " + strayPhoto, "UNNAMED  " + ownPhoto, "UNNAMED  " + strayPDF, "UNNAMED  " + youngPhoto,
		"LEFTOVER " + half, "LEFTOVER " + beside, "LEFTOVER " + youngHalf,
		"0 changed, 0 missing; 0 thumbnails made; 4 files no record names, 3 temporary files of unfinished writes, 0 removed",
		"7 file(s) no record accounts for: `verify --repair` removes those written over an hour ago",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify's report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ": removed") {
		t.Errorf("verify without --repair removed files:\n%s", out)
	}

	out, _, err = runCommand(t, url, data, "", "verify", "--repair")
	if err != nil || !strings.Contains(out, "4 files no record names, 3 temporary files of unfinished writes, 5 removed") ||
		!strings.Contains(out, "UNNAMED  "+youngPhoto) || !strings.Contains(out, "left, written within the hour") {
		t.Fatalf("verify --repair: %v\n%s", err, out)
	}
	for name, kept := range map[string]bool{strayPhoto: false, ownPhoto: false, ownThumb: false, strayPDF: false, half: false, beside: false,
		youngPhoto: true, youngHalf: true, "thumbnails/" + hex.EncodeToString(sharedSum[:]) + ".jpg": true} {
		if _, err := os.Stat(filepath.Join(blobs, name)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
	for _, f := range before {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a file a record names was removed: %v", err)
		}
	}
	out, _, err = runCommand(t, url, data, "", "verify")
	if err != nil || !strings.Contains(out, "0 changed, 0 missing; 0 thumbnails made; 1 files no record names, 1 temporary files of unfinished writes, 0 removed") {
		t.Errorf("verify after the repair: %v\n%s", err, out)
	}

	// A row whose file is gone, with no digest recorded (imported without
	// one): MISSING all the same.
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := tenant.Unrestricted(context.Background(), "test: a photo recorded without its digest")
	ph, err := st.Client.Photo.Query().Where(photo.HasItemWith(item.HasEnvironmentWith(environment.HasInventoryWith(
		inventory.IsSigned(false), inventory.AgentSignatureDateIsNil(), inventory.OwnerSignatureDateIsNil())))).
		Order(ent.Asc(photo.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Client.Photo.UpdateOneID(ph.ID).ClearSha256().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(blobs, "photos", ph.StorageReference)); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCommand(t, url, data, "", "verify")
	if err == nil || !strings.Contains(out, "MISSING  photos/"+ph.StorageReference+" (photo "+ph.ID.String()+", no sha256 recorded)") {
		t.Errorf("verify of a digestless row without its file: %v\n%s", err, out)
	}
}
