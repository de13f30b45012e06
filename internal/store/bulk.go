package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/propertyrecords/inventory/ent"
)

// BulkRows is how many rows of one table a write must hold before
// InsertRows is worth it over ent's insert: below it, COPY's extra round
// trips (PostgreSQL describes the table first) cost more than they save.
const BulkRows = 64

// sqliteMaxParameters is SQLite's bound on a statement's parameters.
const sqliteMaxParameters = 32766

// InsertRows writes the rows of one table, as ent's Row returned them (ent's
// defaults, hooks and validators already run), in tx, with the database's
// own bulk path: COPY on PostgreSQL, and on SQLite multi-row inserts
// prepared once and run for every full chunk. Every time is cut to the
// millisecond, as every statement through the store is (millisecondTimes).
func InsertRows(ctx context.Context, tx *sql.Tx, dialectName string, specs []*sqlgraph.CreateSpec) error {
	if len(specs) == 0 {
		return nil
	}
	columns, rows, err := tableRows(specs)
	if err != nil {
		return err
	}
	table := specs[0].Table
	if dialectName == dialect.Postgres {
		return copyRows(ctx, tx, table, columns, rows)
	}
	return insertPrepared(ctx, tx, table, columns, rows)
}

// tableRows lays specs out as one table's rows: every column any of them
// sets, in a fixed order, and NULL where a row does not set it (as ent's
// bulk insert does; every column with a default has it set by ent's
// defaults, so NULL stands only for an absent optional value).
func tableRows(specs []*sqlgraph.CreateSpec) ([]string, [][]any, error) {
	index := map[string]int{}
	var columns []string
	column := func(name string) int {
		i, ok := index[name]
		if !ok {
			i = len(columns)
			index[name] = i
			columns = append(columns, name)
		}
		return i
	}
	type cell struct {
		column int
		value  any
	}
	cells := make([][]cell, len(specs))
	for r, spec := range specs {
		if spec.Table != specs[0].Table {
			return nil, nil, fmt.Errorf("store: bulk rows of two tables, %s and %s", specs[0].Table, spec.Table)
		}
		row := make([]cell, 0, len(spec.Fields)+len(spec.Edges)+1)
		if spec.ID != nil && spec.ID.Value != nil {
			row = append(row, cell{column(spec.ID.Column), spec.ID.Value})
		}
		for _, f := range spec.Fields {
			row = append(row, cell{column(f.Column), f.Value})
		}
		for _, e := range spec.Edges {
			// Only a foreign key in the row itself: ent's edge fields.
			if !(e.Rel == sqlgraph.M2O || e.Rel == sqlgraph.O2O && e.Inverse) || len(e.Columns) != 1 || len(e.Target.Nodes) != 1 {
				return nil, nil, fmt.Errorf("store: bulk rows of %s: edge %v of another table", spec.Table, e.Columns)
			}
			row = append(row, cell{column(e.Columns[0]), e.Target.Nodes[0]})
		}
		cells[r] = row
	}
	rows := make([][]any, len(specs))
	for r, row := range cells {
		values := make([]any, len(columns))
		for _, c := range row {
			values[c.column] = plainValue(c.value)
		}
		rows[r] = values
	}
	return columns, rows, nil
}

// plainValue is v as both drivers take it: pointers followed, UUIDs as
// their 16 bytes for COPY's binary format (text on SQLite: see
// insertPrepared), times at the millisecond.
func plainValue(v any) any {
	switch t := v.(type) {
	case *uuid.UUID:
		if t == nil {
			return nil
		}
		return *t
	case time.Time:
		return t.Truncate(time.Millisecond)
	case *time.Time:
		if t == nil {
			return nil
		}
		return t.Truncate(time.Millisecond)
	}
	return v
}

// copyRows runs COPY on the pgx connection under tx: database/sql has no
// way to it from a transaction, but pgx hands its connection to a
// QueryRewriter passed as a statement's first argument, run on tx's
// connection, in tx.
func copyRows(ctx context.Context, tx *sql.Tx, table string, columns []string, rows [][]any) error {
	for _, row := range rows {
		for i, v := range row {
			switch t := v.(type) {
			case uuid.UUID:
				row[i] = [16]byte(t)
			case driver.Valuer:
				value, err := t.Value()
				if err != nil {
					return fmt.Errorf("store: copying %s.%s: %w", table, columns[i], err)
				}
				row[i] = value
			}
		}
	}
	c := &copier{table: table, columns: columns, rows: rows}
	if _, err := tx.ExecContext(ctx, "SELECT 1", c); err != nil {
		return err
	}
	if c.copied != int64(len(rows)) {
		return fmt.Errorf("store: copied %d rows of %d into %s", c.copied, len(rows), table)
	}
	return nil
}

type copier struct {
	table   string
	columns []string
	rows    [][]any
	copied  int64
}

func (c *copier) RewriteQuery(ctx context.Context, conn *pgx.Conn, query string, args []any) (string, []any, error) {
	n, err := conn.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, pgx.CopyFromRows(c.rows))
	c.copied = n
	return query, args, err
}

// insertPrepared inserts rows in statements of as many rows as SQLite's
// parameter bound allows, prepared once for every full statement.
func insertPrepared(ctx context.Context, tx *sql.Tx, table string, columns []string, rows [][]any) error {
	per := min(len(rows), sqliteMaxParameters/len(columns))
	full := len(rows) - len(rows)%per
	args := make([]any, 0, per*len(columns))
	if full > 0 {
		stmt, err := tx.PrepareContext(ctx, insertStatement(table, columns, per))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for start := 0; start < full; start += per {
			args = args[:0]
			for _, row := range rows[start : start+per] {
				args = append(args, row...)
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
	}
	if rest := rows[full:]; len(rest) > 0 {
		args = args[:0]
		for _, row := range rest {
			args = append(args, row...)
		}
		if _, err := tx.ExecContext(ctx, insertStatement(table, columns, len(rest)), args...); err != nil {
			return err
		}
	}
	return nil
}

func insertStatement(table string, columns []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO `" + table + "` (`" + strings.Join(columns, "`, `") + "`) VALUES ")
	row := "(" + strings.Repeat("?, ", len(columns)-1) + "?)"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// bulkCacheKiB is SQLite's page cache for a bulk load, against its default
// 2 MiB: the indexes of random UUIDs touch pages all over each table, and a
// cache that holds them halves the reads and the spills to the WAL
// mid-transaction (docs/decisions.md, issue 39). It costs as much memory
// (the load's peak RSS grows by about twice that) for as long as the load
// runs.
const bulkCacheKiB = 64 << 10

// WithBulkCache gives tx's connection a page cache for a bulk load, on
// SQLite, until the returned func gives it back its default (call it before
// the commit; a connection left with the large cache by a failed load only
// holds more memory). On PostgreSQL there is nothing to do.
func WithBulkCache(ctx context.Context, tx *ent.Tx) (restore func() error, err error) {
	if tx.Dialect() != dialect.SQLite {
		return func() error { return nil }, nil
	}
	sqlTx, err := tx.SQLTx()
	if err != nil {
		return nil, err
	}
	var before int
	if err := sqlTx.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&before); err != nil {
		return nil, err
	}
	if _, err := sqlTx.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", bulkCacheKiB)); err != nil {
		return nil, err
	}
	return func() error {
		_, err := sqlTx.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = %d", before))
		return err
	}, nil
}
