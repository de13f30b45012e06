package testdb

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvShare names a folder through which the test processes of one run
// (every package's, both databases') share their datasets: the first
// process to need one fills it and leaves it there, the others copy it.
// .ci/run sets it: the demo with its files took some 40 s to fill under the
// race detector, in each of three packages on each database. Unset, each
// process fills its own. The folder must be one run's: what it holds is
// not checked against the code that filled it.
const EnvShare = "TESTDB_SHARE"

// shared is what a filled dataset leaves in the share folder for the
// processes after it.
type shared struct {
	dir, key string
}

// sharedFor is where dataset name of the database base is shared, or nil
// when no share folder is set.
func sharedFor(name, base string) *shared {
	dir := os.Getenv(EnvShare)
	if dir == "" {
		return nil
	}
	key := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	if base == "" {
		key += ".sqlite"
	} else {
		sum := sha256.Sum256([]byte(base))
		key += ".postgres-" + hex.EncodeToString(sum[:6])
	}
	return &shared{dir: dir, key: key}
}

func (s *shared) path(suffix string) string { return filepath.Join(s.dir, s.key+suffix) }

// read returns what the file of suffix holds, and false when the dataset
// was not shared yet.
func (s *shared) read(suffix string) ([]byte, bool, error) {
	data, err := os.ReadFile(s.path(suffix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// write leaves data under suffix, whole or not at all: renamed into place.
func (s *shared) write(suffix string, data []byte) error {
	tmp := s.path(suffix + ".partial")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("sharing a dataset: %w", err)
	}
	return os.Rename(tmp, s.path(suffix))
}
