package files

import (
	"context"
	"errors"
	"sync"
)

// DeferredSync is a bulk writer's promise to make what it wrote durable
// all at once (Sync) before anything that names it commits, instead of
// each file being flushed to disk as it is written: the demo load writes
// thousands of photos, thumbnails and PDFs, and a flush each made its
// first start take 8 s rather than 2 on this machine's disk.
type DeferredSync struct {
	mu      sync.Mutex
	folders map[*folder][]string // the keys written to each folder store
}

type deferredKey struct{}

// DeferSync returns ctx for a bulk writer: folder stores written through
// it leave their files unflushed until d.Sync. Object stores (S3 and the
// like) are unaffected; their writes are durable once answered.
func DeferSync(ctx context.Context) (_ context.Context, d *DeferredSync) {
	d = &DeferredSync{folders: map[*folder][]string{}}
	return context.WithValue(ctx, deferredKey{}, d), d
}

func deferredFrom(ctx context.Context) *DeferredSync {
	d, _ := ctx.Value(deferredKey{}).(*DeferredSync)
	return d
}

func (d *DeferredSync) wrote(f *folder, key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.folders[f] = append(d.folders[f], key)
}

// Sync makes every file written through the context durable: one flush of
// each folder's file system where the system has one (syncfs), else a
// flush of each file.
func (d *DeferredSync) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for f, keys := range d.folders {
		if err := f.syncAll(keys); err != nil {
			errs = append(errs, err)
		}
	}
	clear(d.folders)
	return errors.Join(errs...)
}

// syncEach flushes each of keys' files: syncAll where the system cannot
// flush a whole file system at once.
func (f *folder) syncEach(keys []string) error {
	for _, key := range keys {
		file, err := f.root.Open(key)
		if err != nil {
			return err
		}
		err = file.Sync()
		if closeErr := file.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
