package store

import (
	"context"
	"database/sql"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	lru "github.com/hashicorp/golang-lru/v2"
)

// sqliteReader runs SQLite's reads outside transactions as prepared
// statements kept by their text. modernc's driver prepares every statement
// it is given anew, and SQLite's parsing and planning of a SELECT was about
// a sixth of the server's CPU on a flat page; database/sql's Stmt prepares
// each kept statement once per connection and reuses it. SQLite prepares
// again by itself a statement whose tables changed.
type sqliteReader struct {
	*entsql.Driver
	db    *sql.DB
	stmts *lru.Cache[string, *sql.Stmt]
}

// keptStatements bounds the statements kept: the service's queries are a
// few hundred texts (an IN list's length makes its own text), each a few
// kilobytes per connection in SQLite.
const keptStatements = 256

func newSQLiteReader(db *sql.DB) dialect.Driver {
	// A statement evicted while its rows are read is finalized when they
	// are closed (database/sql tracks them).
	stmts, err := lru.NewWithEvict(keptStatements, func(_ string, stmt *sql.Stmt) { _ = stmt.Close() })
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &sqliteReader{Driver: entsql.OpenDB(dialect.SQLite, db), db: db, stmts: stmts}
}

func (d *sqliteReader) Query(ctx context.Context, query string, args, v any) error {
	rows, ok := v.(*entsql.Rows)
	argv, argsOK := args.([]any)
	if !ok || (!argsOK && args != nil) || !selects(query) {
		return d.Driver.Query(ctx, query, args, v)
	}
	stmt, ok := d.stmts.Get(query)
	if !ok {
		prepared, err := d.db.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		if previous, loaded, _ := d.stmts.PeekOrAdd(query, prepared); loaded {
			_ = prepared.Close() // another request prepared it first
			prepared = previous
		}
		stmt = prepared
	}
	read, err := stmt.QueryContext(ctx, argv...)
	if err != nil {
		return err
	}
	rows.ColumnScanner = read
	return nil
}
