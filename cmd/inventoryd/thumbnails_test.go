package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// An import stores its photos and leaves their thumbnails to a durable job
// per inventory, committed with it: after the import no thumbnail is kept
// and the jobs wait in the database; a server started on the database
// makes every one.
func TestAnImportsThumbnailsAreMadeByAServersJob(t *testing.T) {
	source, sourceData := testdb.URL(t), t.TempDir()
	out, _, err := runCommand(t, source, sourceData, "", "generate", "--seed", "11", "--companies", "1", "--properties", "2",
		"--inventories", "2", "--environments", "1-2", "--items", "1-3", "--photos", "1", "--files")
	if err != nil {
		t.Fatal(err)
	}
	company := printedCompanies(t, out)[0]
	exportDir := t.TempDir()
	file := filepath.Join(exportDir, "company.ndjson")
	if _, errOut, err := runCommand(t, source, sourceData, "", "export", "--company", company, "--files", exportDir, file); err != nil {
		t.Fatalf("export: %q, %v", errOut, err)
	}
	photos, _ := filepath.Glob(filepath.Join(exportDir, "photos", "*"))
	if len(photos) == 0 {
		t.Fatal("the export has no photo")
	}

	target, targetData := testdb.URL(t), t.TempDir()
	if out, errOut, err := runCommand(t, target, targetData, "", "import", file); err != nil || !strings.Contains(out, "rejected 0") {
		t.Fatalf("import: %q, %v\n%s", out, err, errOut)
	}
	thumbs := func() []string {
		found, _ := filepath.Glob(filepath.Join(targetData, "blobs", "thumbnails", "*.jpg"))
		return found
	}
	if n := len(thumbs()); n != 0 {
		t.Fatalf("thumbnails kept by the import itself: %d; want none (the job makes them)", n)
	}
	waiting := thumbnailJobs(t, target)
	if waiting == 0 {
		t.Fatal("the import committed no thumbnails job")
	}

	m := launchOn(t, target, slog.New(slog.DiscardHandler), func(c *Config) { c.DataDir = targetData })
	closeAfter(t, m)
	for deadline := time.Now().Add(30 * time.Second); len(thumbs()) < len(photos); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("thumbnails made by the server's jobs: %d of %d photos", len(thumbs()), len(photos))
		}
	}
}

// thumbnailJobs counts the thumbnails jobs waiting in the database at url.
func thumbnailJobs(t *testing.T, url string) int {
	t.Helper()
	st := testdb.OpenURL(t, url)
	j, err := jobs.New(context.Background(), st, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Stop(context.Background())
	res, err := j.Client().JobList(context.Background(), river.NewJobListParams().Kinds(jobs.ThumbnailsArgs{}.Kind()).First(100))
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Jobs)
}
