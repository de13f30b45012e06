package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"
)

// bucket is what the store needs of a blob store: a few verbs, so that the
// default build carries no cloud SDK for the local folder and memory stores
// (they are a page of code each) and a small S3 client for s3://.
type bucket interface {
	// write stores what r holds (size bytes, or -1: unknown) under key,
	// whole or not at all.
	write(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// remove deletes key; a missing key is no error.
	remove(ctx context.Context, key string) error
	// open returns errNotFound for a key that holds nothing.
	open(ctx context.Context, key string) (object, error)
	// signedURL is the provider's own time-limited download URL; local
	// stores are signed by this service instead (signing.go) and never asked.
	signedURL(ctx context.Context, key string, ttl time.Duration) (string, error)
	// list calls each for every file under prefix, in no set order.
	list(ctx context.Context, prefix string, each func(Entry) error) error
	close() error
}

// object is an open stored file: seekable, so that http.ServeContent can
// answer Range requests without reading what it skips.
type object interface {
	io.ReadSeekCloser
	modTime() time.Time
}

var errNotFound = errors.New("files: not found")

// Entry is a stored file, as a listing gives it.
type Entry struct {
	Key      string
	Modified time.Time
}

// folder is a store in a local folder, one file per key. os.Root keeps every
// key inside it whatever it holds, and a write lands whole or not at all
// (a temporary file renamed), so a reader never sees half a PDF.
// It reads folders written by gocloud's fileblob (which this replaced): the
// same paths; its .attrs side files are ignored.
type folder struct{ root *os.Root }

// tempFolder holds the folder store's writes until they are whole: one
// folder, so that what a killed process left is found without walking
// millions of photos (RemoveTemporaries), and inside the store's own folder,
// so that the rename into place stays on one file system. Writes before it
// existed left their ".tmp" files beside their keys; Leftovers finds those.
const tempFolder = ".tmp"

func openFolder(dir string) (*folder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("files: creating %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("files: opening %s: %w", dir, err)
	}
	return &folder{root: root}, nil
}

// write writes a temporary file in tempFolder and renames it to key. What
// the system refuses because of the folder's state (full, read-only, gone)
// is a refusal, so the client is told the store is unavailable.
func (f *folder) write(ctx context.Context, key string, r io.Reader, _ int64, _ string) error {
	deferred := deferredFrom(ctx)
	err := f.writeFile(key, r, deferred == nil)
	if err == nil && deferred != nil {
		deferred.wrote(f, key)
	}
	if reason := errnoRefusal(err); reason != "" {
		return &refused{reason: reason, err: err}
	}
	return err
}

// writeFile writes key whole; flush has the file flushed to disk before
// it takes key's name (a DeferredSync's writes are flushed by its Sync).
func (f *folder) writeFile(key string, r io.Reader, flush bool) error {
	if err := f.root.MkdirAll(tempFolder, 0o755); err != nil {
		return err
	}
	if dir := path.Dir(key); dir != "." {
		if err := f.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	temp := fmt.Sprintf("%s/%s.%d.%d.tmp", tempFolder, strings.ReplaceAll(key, "/", "_"), os.Getpid(), time.Now().UnixNano())
	file, err := f.root.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(file, r)
	if err == nil && flush {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = f.root.Rename(temp, key)
	}
	if err != nil {
		_ = f.root.Remove(temp)
	}
	return err
}

func (f *folder) remove(_ context.Context, key string) error {
	if err := f.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

type folderObject struct {
	*os.File
	modified time.Time
}

func (o folderObject) modTime() time.Time { return o.modified }

func (f *folder) open(_ context.Context, key string) (object, error) {
	file, err := f.root.Open(key)
	// ENOTDIR: a file stands where a folder of the key should, so nothing
	// is stored under it.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	info, err := file.Stat()
	if err != nil || info.IsDir() {
		file.Close()
		if err == nil {
			err = errNotFound
		}
		return nil, err
	}
	return folderObject{file, info.ModTime()}, nil
}

func (f *folder) signedURL(context.Context, string, time.Duration) (string, error) {
	return "", errors.New("files: a local folder has no provider URLs")
}

func (f *folder) list(ctx context.Context, prefix string, each func(Entry) error) error {
	return f.walk(ctx, func(name string, d fs.DirEntry) error {
		if strings.HasSuffix(name, ".attrs") || strings.HasSuffix(name, ".tmp") || !strings.HasPrefix(name, prefix) {
			return nil
		}
		return f.entry(name, d, each)
	})
}

// walk calls each for every file of the folder but those of tempFolder.
func (f *folder) walk(ctx context.Context, each func(name string, d fs.DirEntry) error) error {
	return fs.WalkDir(f.root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if name == tempFolder {
				return fs.SkipDir
			}
			return nil
		}
		return each(name, d)
	})
}

// entry calls each with the file name is, unless it went meanwhile.
func (f *folder) entry(name string, d fs.DirEntry, each func(Entry) error) error {
	info, err := d.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return each(Entry{Key: name, Modified: info.ModTime()})
}

// temporaries calls each for the temporary files of unfinished writes: those
// in tempFolder and, when beside, those that writes before it left beside
// their keys (found only by walking the whole folder).
func (f *folder) temporaries(ctx context.Context, beside bool, each func(Entry) error) error {
	err := fs.WalkDir(f.root.FS(), tempFolder, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		return f.entry(name, d, each)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !beside {
		return nil
	}
	return f.walk(ctx, func(name string, d fs.DirEntry) error {
		if !strings.HasSuffix(name, ".tmp") {
			return nil
		}
		return f.entry(name, d, each)
	})
}

func (f *folder) close() error { return f.root.Close() }

// memory is a store in memory, for tests and trials (mem://).
type memory struct {
	mu    sync.RWMutex
	files map[string]memoryFile
}

type memoryFile struct {
	data     []byte
	modified time.Time
}

type memoryObject struct {
	*bytes.Reader
	modified time.Time
}

func (o memoryObject) Close() error       { return nil }
func (o memoryObject) modTime() time.Time { return o.modified }

func (m *memory) write(_ context.Context, key string, r io.Reader, _ int64, _ string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[key] = memoryFile{data, time.Now().UTC()}
	return nil
}

func (m *memory) remove(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, key)
	return nil
}

func (m *memory) open(_ context.Context, key string) (object, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	file, ok := m.files[key]
	if !ok {
		return nil, errNotFound
	}
	return memoryObject{bytes.NewReader(file.data), file.modified}, nil
}

func (m *memory) signedURL(context.Context, string, time.Duration) (string, error) {
	return "", errors.New("files: memory has no provider URLs")
}

func (m *memory) list(_ context.Context, prefix string, each func(Entry) error) error {
	m.mu.RLock()
	entries := make([]Entry, 0, len(m.files))
	for key, file := range m.files {
		if strings.HasPrefix(key, prefix) {
			entries = append(entries, Entry{Key: key, Modified: file.modified})
		}
	}
	m.mu.RUnlock()
	for _, e := range entries {
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

func (m *memory) close() error { return nil }
