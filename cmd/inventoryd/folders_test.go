package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAStartOnAnUnusableDataFolderNamesItAndWhy: a data folder the server
// cannot use stops its start with an error that names the folder, the
// setting behind it, what it holds and what is wrong. An empty read-only
// folder used to stop it with SQLite's "unable to open database file (14)".
// Root writes through permissions, so the permission cases need another
// user; a file where a folder should be fails whoever runs it.
func TestAStartOnAnUnusableDataFolderNamesItAndWhy(t *testing.T) {
	root := os.Geteuid() == 0
	for _, tt := range []struct {
		name       string
		asRoot     bool // meaningful when run as root
		prepare    func(t *testing.T, dir string) (dataDir string)
		wantPath   func(dataDir string) string
		wantReason string
	}{
		{"a file where the data folder should be", true, func(t *testing.T, dir string) string {
			file := filepath.Join(dir, "data")
			writeFile(t, file, "")
			return file
		}, func(d string) string { return d }, "is a file"},
		{"a file where the blob folder should be", true, func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "blobs"), "")
			return dir
		}, func(d string) string { return filepath.Join(d, "blobs") }, "is a file"},
		{"an empty read-only data folder", false, func(t *testing.T, dir string) string {
			chmod(t, dir, 0o555)
			return dir
		}, func(d string) string { return d }, "permission denied"},
		{"a read-only blob folder", false, func(t *testing.T, dir string) string {
			blobs := filepath.Join(dir, "blobs")
			if err := os.Mkdir(blobs, 0o555); err != nil {
				t.Fatal(err)
			}
			return dir
		}, func(d string) string { return filepath.Join(d, "blobs") }, "permission denied"},
		{"a read-only database file", false, func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "inventory.db"), "")
			chmod(t, filepath.Join(dir, "inventory.db"), 0o444)
			return dir
		}, func(d string) string { return filepath.Join(d, "inventory.db") }, "permission denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if root && !tt.asRoot {
				t.Skip("run as root, which writes whatever the permissions say")
			}
			dataDir := tt.prepare(t, t.TempDir())
			var out bytes.Buffer
			err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--shutdown-delay", "0"},
				func(string) string { return "" }, stdio{nil, &out, &out})
			if err == nil {
				t.Fatal("the server started")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantPath(dataDir)) || !strings.Contains(msg, "INVENTORY_DATA_DIR") || !strings.Contains(msg, tt.wantReason) {
				t.Errorf("start error: %q, want it to name %s, INVENTORY_DATA_DIR and %q", msg, tt.wantPath(dataDir), tt.wantReason)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// chmod sets path's mode, and gives the owner write back after the test, so
// that its temporary folder can be removed.
func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(path, 0o755) })
}
