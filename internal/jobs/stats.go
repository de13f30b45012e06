package jobs

import (
	"context"
	"database/sql"
	"time"

	"entgo.io/ent/dialect"

	"github.com/propertyrecords/inventory/internal/metrics"
)

// statsTimeout bounds the reads of a scrape: a busy database answers the
// scrape without the jobs' figures rather than late.
const statsTimeout = 2 * time.Second

// Stats counts the jobs in River's table by kind and state, and measures
// how long the oldest available job has waited for a worker: read at each
// scrape of /metrics (two aggregate reads of river_job, over its
// state-and-kind indexes; completed jobs are removed after a day).
func (j *Jobs) Stats() metrics.Jobs {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	stats := metrics.Jobs{Count: map[metrics.JobKey]int{}}
	rows, err := j.db.QueryContext(ctx, `SELECT kind, state, COUNT(*) FROM river_job GROUP BY kind, state`)
	if err != nil {
		j.log.Warn("jobs: reading the jobs' states for the metrics", "error", err)
		return metrics.Jobs{}
	}
	defer rows.Close()
	for rows.Next() {
		var key metrics.JobKey
		var n int
		if err := rows.Scan(&key.Kind, &key.State, &n); err != nil {
			j.log.Warn("jobs: reading the jobs' states for the metrics", "error", err)
			return metrics.Jobs{}
		}
		stats.Count[key] = n
	}
	if err := rows.Err(); err != nil {
		j.log.Warn("jobs: reading the jobs' states for the metrics", "error", err)
		return metrics.Jobs{}
	}
	// Due and not taken: available since its scheduled time. Computed by
	// the database, whose clock River's times are of.
	oldest := `SELECT EXTRACT(EPOCH FROM now() - MIN(scheduled_at)) FROM river_job WHERE state = 'available'`
	if j.dialect == dialect.SQLite {
		oldest = `SELECT (julianday('now') - julianday(MIN(scheduled_at))) * 86400 FROM river_job WHERE state = 'available'`
	}
	var seconds sql.NullFloat64
	if err := j.db.QueryRowContext(ctx, oldest).Scan(&seconds); err != nil {
		j.log.Warn("jobs: reading the oldest available job for the metrics", "error", err)
		return stats
	}
	if seconds.Valid {
		stats.OldestAvailable = time.Duration(max(seconds.Float64, 0) * float64(time.Second))
	}
	return stats
}
