package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"entgo.io/ent/schema/field"
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

// PostgresMaxParameters is PostgreSQL's bound on a statement's parameters.
const PostgresMaxParameters = 65535

// OneInsert is the rows of several tables (each a list of ent's Row specs,
// parents' tables before their children's) as one PostgreSQL statement:
// each table's multi-row insert a data-modifying WITH of the last table's.
// A tree of 67 rows then costs one round trip and one statement's start
// instead of one per table. The statement is atomic, and its foreign keys
// are checked at its end, when every parent is in. ok is false on SQLite (which has no data-modifying
// WITH) and when the rows take more parameters than one statement can.
func OneInsert(dialectName string, tables ...[]*sqlgraph.CreateSpec) (query string, args []any, ok bool, err error) {
	if dialectName != dialect.Postgres {
		return "", nil, false, nil
	}
	var inserts []*entsql.InsertBuilder
	parameters := 0
	for _, specs := range tables {
		if len(specs) == 0 {
			continue
		}
		columns, rows, err := tableRows(specs)
		if err != nil {
			return "", nil, false, err
		}
		insert := entsql.Dialect(dialect.Postgres).Insert(specs[0].Table).Columns(columns...)
		for _, row := range rows {
			insert.Values(row...)
		}
		inserts = append(inserts, insert)
		parameters += len(columns) * len(rows)
	}
	if len(inserts) == 0 || parameters > PostgresMaxParameters {
		return "", nil, false, nil
	}
	// Each insert is ent's; Join numbers its placeholders on from those
	// of the inserts before it.
	var b entsql.Builder
	b.SetDialect(dialect.Postgres)
	for i, insert := range inserts {
		switch last := i == len(inserts)-1; {
		case last && i > 0:
			b.WriteString(" ").Join(insert)
		case last:
			b.Join(insert)
		default:
			if i == 0 {
				b.WriteString("WITH ")
			} else {
				b.WriteString(", ")
			}
			b.WriteString("w" + strconv.Itoa(i) + " AS (").Join(insert).WriteString(")")
		}
	}
	query, args = b.Query()
	return query, args, true, b.Err()
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
			value := f.Value
			if f.Type == field.TypeJSON { // as ent's inserts send it
				raw, err := json.Marshal(value)
				if err != nil {
					return nil, nil, fmt.Errorf("store: rows of %s: marshalling %s: %w", spec.Table, f.Column, err)
				}
				value = json.RawMessage(raw)
			}
			row = append(row, cell{column(f.Column), value})
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

// WithoutSecondaryIndexes drops, in tx, the foreign keys and the non-unique
// indexes of tables when every one of them is empty, and returns rebuild,
// which creates them again from the definitions the database gave for them
// (call it before the commit). A load into an empty database then writes
// its rows without checking each one's parents and without inserting each
// into the indexes at a random place: the rebuild checks every foreign key
// in one join and builds every index from sorted rows, as PostgreSQL's
// "Populating a Database" advises. Primary keys and unique indexes stay, so
// a duplicate is refused as it is written. Into tables that hold rows
// already, rebuilding would cost more than it saves: nothing is dropped.
//
// The drops lock the tables until the commit; they are empty, so no reader
// waits for rows. Everything is in tx: a load that fails rolls back to the
// schema it started from. SQLite keeps its foreign keys (its schema cannot
// drop one), PostgreSQL drops both.
func WithoutSecondaryIndexes(ctx context.Context, tx *ent.Tx, tables ...string) (rebuild func() error, err error) {
	nothing := func() error { return nil }
	sqlTx, err := tx.SQLTx()
	if err != nil {
		return nil, err
	}
	for _, table := range tables {
		var rows bool
		if err := sqlTx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+quoteIdentifier(table)+")").Scan(&rows); err != nil {
			return nil, err
		}
		if rows {
			return nothing, nil
		}
	}
	var drops, creates []string
	for _, table := range tables {
		var d, c []string
		if tx.Dialect() == dialect.Postgres {
			d, c, err = postgresSecondaryIndexes(ctx, sqlTx, table)
		} else {
			d, c, err = sqliteSecondaryIndexes(ctx, sqlTx, table)
		}
		if err != nil {
			return nil, err
		}
		drops, creates = append(drops, d...), append(creates, c...)
	}
	if err := execAll(ctx, sqlTx, drops); err != nil {
		return nil, err
	}
	return func() error { return execAll(ctx, sqlTx, creates) }, nil
}

// postgresSecondaryIndexes are the statements that drop table's foreign
// keys and non-unique indexes, and those that create them again as they were.
func postgresSecondaryIndexes(ctx context.Context, tx *sql.Tx, table string) (drops, creates []string, err error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT 'DROP INDEX ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		WHERE i.indrelid = to_regclass($1) AND NOT i.indisunique AND NOT i.indisprimary
		UNION ALL
		SELECT 'ALTER TABLE ' || c.conrelid::regclass::text || ' DROP CONSTRAINT ' || quote_ident(c.conname),
		       'ALTER TABLE ' || c.conrelid::regclass::text || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid)
		FROM pg_constraint c
		WHERE c.conrelid = to_regclass($1) AND c.contype = 'f'`, quoteIdentifier(table))
	if err != nil {
		return nil, nil, err
	}
	return dropsAndCreates(rows)
}

// sqliteSecondaryIndexes are the statements that drop table's non-unique
// indexes made by CREATE INDEX, and those that create them again.
func sqliteSecondaryIndexes(ctx context.Context, tx *sql.Tx, table string) (drops, creates []string, err error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT 'DROP INDEX ' || '"' || replace(l.name, '"', '""') || '"', m.sql
		FROM pragma_index_list(?) l JOIN sqlite_master m ON m.type = 'index' AND m.name = l.name
		WHERE l."unique" = 0 AND l.origin = 'c' AND m.sql IS NOT NULL`, table)
	if err != nil {
		return nil, nil, err
	}
	return dropsAndCreates(rows)
}

func dropsAndCreates(rows *sql.Rows) (drops, creates []string, err error) {
	defer rows.Close()
	for rows.Next() {
		var drop, create string
		if err := rows.Scan(&drop, &create); err != nil {
			return nil, nil, err
		}
		drops, creates = append(drops, drop), append(creates, create)
	}
	return drops, creates, rows.Err()
}

func execAll(ctx context.Context, tx *sql.Tx, statements []string) error {
	for _, s := range statements {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("store: %s: %w", s, err)
		}
	}
	return nil
}

// quoteIdentifier quotes a table's name as both databases read it.
func quoteIdentifier(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
