//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock(2) on path, creating it, waiting for
// another holder until ctx ends. The lock is the open file's: it goes when
// unlock closes it, or when the process dies, so none is ever left stale.
// It is a file of its own, not the database: SQLite locks the database with
// fcntl(2) locks, which some systems implement flock with.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: opening the migration lock: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("store: taking the migration lock: %w", err)
		}
		// Polled rather than blocking, so that ctx can end the wait; the
		// holder's migration takes a second at most.
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("store: waiting for another process's migration: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
