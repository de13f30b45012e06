package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A folder the configuration keeps files in: the SQLite database's, the
// blob store's, the signing key's. Each is checked before anything is opened
// in it, so that a folder that cannot be used stops the start with its path,
// the setting that names it and what is wrong: SQLite's own error for an
// empty read-only data folder was "unable to open database file (14)", with
// no path, and a read-only blob folder failed later, on the first file
// written.
type folder struct {
	path    string
	setting string // the variable that names it
	holds   string // what is kept in it
}

// databaseFile is the configured SQLite database's file and the folder it
// is in, if the database is SQLite (store.Open's forms: a path, sqlite:PATH,
// sqlite://PATH).
func (c Config) databaseFile() (file string, in folder, ok bool) {
	file = c.DatabaseURL
	switch {
	case strings.HasPrefix(strings.ToLower(file), "sqlite:"):
		file = strings.TrimPrefix(file[len("sqlite:"):], "//")
	case strings.Contains(file, "://"):
		return "", folder{}, false // PostgreSQL, or a scheme store.Open refuses
	}
	if file == "" {
		return "", folder{}, false
	}
	in = folder{path: filepath.Dir(file), setting: "INVENTORY_DATABASE_URL", holds: "the SQLite database " + file}
	if filepath.Clean(file) == filepath.Join(c.DataDir, "inventory.db") {
		in.setting = "INVENTORY_DATA_DIR"
	}
	return file, in, true
}

// fileFolders are the folders the file store and the URL signing key are
// kept in, when they are local.
func (c Config) fileFolders() []folder {
	var out []folder
	switch {
	case c.BlobURL == "":
		out = append(out, folder{path: filepath.Join(c.DataDir, "blobs"), setting: "INVENTORY_DATA_DIR", holds: "the stored PDFs and photos"})
	case strings.HasPrefix(c.BlobURL, "file://"):
		out = append(out, folder{path: strings.TrimPrefix(c.BlobURL, "file://"), setting: "INVENTORY_BLOB_URL", holds: "the stored PDFs and photos"})
	}
	if c.SigningKey == "" {
		out = append(out, folder{path: c.DataDir, setting: "INVENTORY_DATA_DIR", holds: "the URL signing key (url-signing.key)"})
	}
	return out
}

// blobStoreOfItsOwn reports whether the files are kept where no other
// instance can reach them: in memory, in the data folder's blobs (the
// default), or in a file:// folder inside the data folder, which is one
// instance's (its SQLite database, its signing key). Any other file://
// folder may be one that every instance mounts.
func (c Config) blobStoreOfItsOwn() bool {
	switch {
	case c.BlobURL == "", strings.HasPrefix(c.BlobURL, "mem://"):
		return true
	case strings.HasPrefix(c.BlobURL, "file://"):
		data, err1 := filepath.Abs(c.DataDir)
		blobs, err2 := filepath.Abs(strings.TrimPrefix(c.BlobURL, "file://"))
		rel, err3 := filepath.Rel(data, blobs)
		return err1 == nil && err2 == nil && err3 == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	return false
}

// checkDatabaseFolder checks the SQLite database's folder, and the
// database file when it exists: both must be writable.
func (c Config) checkDatabaseFolder() error {
	file, in, ok := c.databaseFile()
	if !ok {
		return nil
	}
	if err := in.check(); err != nil {
		return err
	}
	db, err := os.OpenFile(file, os.O_RDWR, 0)
	switch {
	case err == nil:
		return db.Close()
	case errors.Is(err, fs.ErrNotExist):
		return nil // SQLite makes it
	}
	return fmt.Errorf("the SQLite database %s (%s) cannot be opened for writing: %w: make it writable by this user (uid %d)", file, in.setting, err, os.Geteuid())
}

// checkFileFolders checks the folders of the local file store and signing key.
func (c Config) checkFileFolders() error {
	for _, f := range c.fileFolders() {
		if f.path == "" {
			continue // files.Open says what is wrong with the URL
		}
		if err := f.check(); err != nil {
			return err
		}
	}
	return nil
}

// check makes the folder if it is missing, and makes sure a file can be
// created in it: permissions, a read-only mount, a file where the folder
// should be and a full disk all show here, by trying.
func (f folder) check() error {
	fix := fmt.Sprintf("make it a folder this user (uid %d) can write, or set %s to one", os.Geteuid(), f.setting)
	if info, err := os.Stat(f.path); err == nil && !info.IsDir() {
		return fmt.Errorf("%s (%s) is a file, where the folder that holds %s should be: %s", f.path, f.setting, f.holds, fix)
	}
	if err := os.MkdirAll(f.path, 0o755); err != nil {
		return fmt.Errorf("the folder %s (%s), which holds %s, cannot be created: %w: %s", f.path, f.setting, f.holds, err, fix)
	}
	probe, err := os.CreateTemp(f.path, ".inventoryd-write-check-*")
	if err != nil {
		return fmt.Errorf("the folder %s (%s), which holds %s, cannot be written: %w: %s", f.path, f.setting, f.holds, err, fix)
	}
	name := probe.Name()
	probe.Close()
	return os.Remove(name)
}

// tempFolder is where the server's temporary files go: the parts of
// uploads that gqlgen's multipart transport spills to disk (past 1 MiB, a
// photo of up to INVENTORY_MAX_PHOTO_BYTES), and anything else in the
// process that asks os.TempDir. Under the data folder, so that they count
// against the volume the operator sized and watches, and so that the start
// can remove what a killed process left: in the system's temporary folder
// they stayed, nobody's to remove (kill -9 during uploads left one each time).
func (c Config) tempFolder() folder {
	return folder{path: filepath.Join(c.DataDir, "tmp"), setting: "INVENTORY_DATA_DIR", holds: "the temporary files of uploads"}
}

// useTempFolder empties the temporary folder and makes it the process's
// ($TMPDIR, which os.TempDir reads on each call, as gqlgen's transport calls
// it for each upload); it returns how many files it removed and what puts
// $TMPDIR back. Everything in the folder is a process's that ended: the data
// folder is one instance's (its SQLite database, its signing key), and only
// the server points $TMPDIR there.
func (c Config) useTempFolder() (removed int, restore func(), err error) {
	tmp := c.tempFolder()
	entries, err := os.ReadDir(tmp.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, nil, fmt.Errorf("the folder %s (%s), which holds %s, cannot be read: %w", tmp.path, tmp.setting, tmp.holds, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(tmp.path, e.Name())); err != nil {
			return removed, nil, fmt.Errorf("removing what a process left in %s: %w", tmp.path, err)
		}
		removed++
	}
	if err := tmp.check(); err != nil {
		return removed, nil, err
	}
	was, set := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", tmp.path); err != nil {
		return removed, nil, err
	}
	return removed, func() {
		if set {
			_ = os.Setenv("TMPDIR", was)
		} else {
			_ = os.Unsetenv("TMPDIR")
		}
	}, nil
}
