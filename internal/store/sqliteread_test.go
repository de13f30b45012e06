package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	entsql "entgo.io/ent/dialect/sql"
)

// TestSQLiteKeepsReadsPrepared: a read is prepared once and reused; rows
// being read survive their statement's eviction; a kept statement follows
// its table's change.
func TestSQLiteKeepsReadsPrepared(t *testing.T) {
	_, db, err := openSQLite(filepath.Join(t.TempDir(), "kept.db"), &options{poolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}
	reader := newSQLiteReader(db).(*sqliteReader)
	query := func(q string, args ...any) *entsql.Rows {
		t.Helper()
		var rows entsql.Rows
		if err := reader.Query(ctx, q, args, &rows); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return &rows
	}
	all := func(rows *entsql.Rows) (got []int) {
		t.Helper()
		defer rows.Close()
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for range 3 {
		if got := all(query("SELECT n FROM t WHERE n > ? ORDER BY n", 1)); fmt.Sprint(got) != "[2 3]" {
			t.Fatalf("got %v", got)
		}
	}
	if n := reader.stmts.Len(); n != 1 {
		t.Fatalf("%d statements kept for one query read three times, want 1", n)
	}

	open := query("SELECT n FROM t ORDER BY n")
	for k := range keptStatements + 10 {
		all(query(fmt.Sprintf("SELECT n + %d FROM t", k)))
	}
	if _, kept := reader.stmts.Peek("SELECT n FROM t ORDER BY n"); kept {
		t.Fatal("the first statement was not evicted")
	}
	if got := all(open); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("rows of an evicted statement: %v", got)
	}

	if got := all(query("SELECT * FROM t WHERE n = ?", 2)); fmt.Sprint(got) != "[2]" {
		t.Fatalf("got %v", got)
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE t ADD COLUMN m INTEGER DEFAULT 7"); err != nil {
		t.Fatal(err)
	}
	rows := query("SELECT * FROM t WHERE n = ?", 2)
	defer rows.Close()
	columns, _ := rows.Columns()
	var n, m int
	if !rows.Next() || rows.Scan(&n, &m) != nil || len(columns) != 2 || m != 7 {
		t.Fatalf("after the table changed: columns %v, %d %d", columns, n, m)
	}
}
