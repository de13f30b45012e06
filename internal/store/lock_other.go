//go:build !unix

package store

import "context"

// lockFile does nothing where flock(2) is missing (Windows): there, first
// migrations of one SQLite file by processes started at once are not
// serialized, and one of them may fail and need starting again.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
