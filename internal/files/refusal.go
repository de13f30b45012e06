package files

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// Why a store refuses a write: the store's state, not the request's nor a
// bug, so the write is answered UNAVAILABLE (503, Retry-After), never
// INTERNAL. Each is a value of the reason label of
// inventory_blob_store_refused_writes_total.
const (
	RefusedFull        = "full"        // no space, or the quota is spent
	RefusedReadOnly    = "read_only"   // a read-only mount
	RefusedDenied      = "denied"      // permissions, or the bucket's policy
	RefusedUnusable    = "unusable"    // the folder is gone, a file stands where a folder should, an I/O error
	RefusedUnreachable = "unreachable" // an object store that does not answer, or is overloaded
)

// refusals are the Refused* reasons in the order the metrics list them.
var refusals = []string{RefusedFull, RefusedReadOnly, RefusedDenied, RefusedUnusable, RefusedUnreachable}

// refused is a write a bucket says the store refused, and why (a Refused*).
type refused struct {
	reason string
	err    error
}

func (r *refused) Error() string { return r.err.Error() }
func (r *refused) Unwrap() error { return r.err }

// errnoRefusal is the reason a local folder refused a write, from the
// system's error, or "" when the error is not the store's state.
func errnoRefusal(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return ""
	}
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT:
		return RefusedFull
	case syscall.EROFS:
		return RefusedReadOnly
	case syscall.EACCES, syscall.EPERM:
		return RefusedDenied
	case syscall.ENOTDIR, syscall.EEXIST, syscall.ENOENT, syscall.EIO, syscall.EISDIR:
		// A write makes the folders it needs, under a name no other write
		// takes: ENOENT is the store's own folder gone from under it, and
		// EEXIST (from making a folder) or ENOTDIR a file where one of its
		// folders should be.
		return RefusedUnusable
	}
	return ""
}

// refusedPhrases say each reason to a client.
var refusedPhrases = map[string]string{
	RefusedFull:        "is full",
	RefusedReadOnly:    "is read-only",
	RefusedDenied:      "refuses writes (permission denied)",
	RefusedUnusable:    "cannot be written",
	RefusedUnreachable: "does not answer",
}

// health is what the store's writes have said of it: the reason the last
// one was refused, until one goes through, and how many were refused.
type health struct {
	mu      sync.Mutex
	reason  string // "" while writes go through
	probed  time.Time
	refused map[string]int64
}

// probeEvery bounds how often Refusing writes to find out whether a store
// that refused takes writes again: /readyz may be polled every second by
// each load balancer, and an object store bills each put.
var probeEvery = 5 * time.Second

// probeName is the file Refusing writes and removes, in the photos' folder:
// where uploads go, so that the probe meets what they would (a folder of its
// own could be writable while that one is not). Listings leave it out.
const (
	probeName = ".write-probe"
	probeKey  = "photos/" + probeName
)

// wrote records how a write ended, and returns err as the client sees it: a
// refusal is UNAVAILABLE naming the store and what is wrong with it, with
// the store's own error kept for the log.
func (s *Store) wrote(key string, err error) error {
	r, ok := s.note(err, true)
	switch {
	case err == nil:
		return nil
	case !ok:
		return fmt.Errorf("files: writing %s: %w", key, err)
	}
	return &apperr.Error{Code: apperr.Unavailable,
		Message: fmt.Sprintf("the blob store (%s) %s: photos and PDFs cannot be stored now; try again later", s.name, refusedPhrases[r.reason]),
		Cause:   fmt.Errorf("files: writing %s: %w", key, err)}
}

// note records what a write's err says of the store: nil, that it takes
// writes; a refusal, that it does not (counted when count); anything else,
// nothing. It returns the refusal, if err is one.
func (s *Store) note(err error, count bool) (*refused, bool) {
	var r *refused
	if err != nil && !errors.As(err, &r) {
		return nil, false
	}
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if err == nil {
		s.health.reason = ""
		return nil, false
	}
	s.health.reason = r.reason
	if count {
		if s.health.refused == nil {
			s.health.refused = map[string]int64{}
		}
		s.health.refused[r.reason]++
	}
	return r, true
}

// Refusing is why the store refuses writes ("" when it takes them): the
// reason its last write was refused, unless a write has gone through since.
// While it refuses, it writes a small file at most every probeEvery to learn
// whether it takes writes again, so that a store freed while nothing was
// uploaded reads as writable without waiting for a client to try. The probe
// is not counted as a refused write: no client's file was refused.
func (s *Store) Refusing(ctx context.Context) string {
	s.health.mu.Lock()
	due := s.health.reason != "" && time.Since(s.health.probed) >= probeEvery
	if due {
		s.health.probed = time.Now()
	}
	reason := s.health.reason
	s.health.mu.Unlock()
	if !due {
		return reason
	}
	err := s.bucket.write(ctx, probeKey, strings.NewReader(probeText), int64(len(probeText)), "text/plain")
	s.note(err, false)
	if err == nil {
		_ = s.bucket.remove(ctx, probeKey)
	}
	return s.WriteState().Reason
}

const probeText = "inventoryd checks that the store takes writes\n"

// WriteState is what the metrics read of the store's writes.
type WriteState struct {
	// Reason is why the store refuses writes; "" while it takes them.
	Reason string
	// Refused counts the writes refused since the start, by reason.
	Refused map[string]int64
}

// WriteState reads the store's write state without writing anything.
func (s *Store) WriteState() WriteState {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	out := WriteState{Reason: s.health.reason, Refused: make(map[string]int64, len(refusals))}
	for _, r := range refusals {
		out.Refused[r] = s.health.refused[r]
	}
	return out
}

// Refusals are the reasons a store may refuse writes.
func Refusals() []string { return append([]string(nil), refusals...) }
