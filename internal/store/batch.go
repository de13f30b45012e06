package store

import "context"

// BatchSize is how many rows one bulk insert takes: under SQLite's and
// PostgreSQL's bound-parameter limits (32766 and 65535; an item takes 9)
// while sending few statements.
const BatchSize = 2000

// SaveInBatches hands rows to save BatchSize at a time.
func SaveInBatches[T any](ctx context.Context, rows []T, save func([]T) error) error {
	for start := 0; start < len(rows); start += BatchSize {
		if err := save(rows[start:min(start+BatchSize, len(rows))]); err != nil {
			return err
		}
	}
	return ctx.Err()
}
