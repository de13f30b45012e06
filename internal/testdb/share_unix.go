//go:build unix

package testdb

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lock takes the dataset's lock in the share folder, waiting for the
// process that fills it: flock(2), gone with the process should it die.
func (s *shared) lock() (unlock func(), err error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.path(".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the shared dataset %s: %w", s.key, err)
	}
	return func() { f.Close() }, nil
}
