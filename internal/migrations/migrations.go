// Package migrations holds the versioned PostgreSQL migrations, generated
// from the ent schema in Atlas's format (a DBA reads plain SQL files, with
// atlas.sum guarding their integrity), and applies them.
//
// SQLite, the embedded default, keeps ent's automatic migration instead.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"time"

	"ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/schema"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	entschema "entgo.io/ent/dialect/sql/schema"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	entmigrate "github.com/propertyrecords/inventory/ent/migrate"
)

// Folder is where the migration files live in the repository.
const Folder = "internal/migrations/postgres"

//go:embed postgres
var files embed.FS

// Dir returns the migration directory embedded in the binary.
func Dir() (migrate.Dir, error) {
	dir := &migrate.MemDir{}
	entries, err := fs.ReadDir(files, "postgres")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		data, err := files.ReadFile(path.Join("postgres", e.Name()))
		if err != nil {
			return nil, err
		}
		if err := dir.WriteFile(e.Name(), data); err != nil {
			return nil, err
		}
	}
	return dir, nil
}

// lockKey serialises concurrent migrators (several replicas starting at once)
// through a PostgreSQL advisory lock.
const lockKey = 0x696e76656e746f72 // "inventor"

// Apply applies the pending migrations in version order, each in its own
// transaction, and returns the versions it applied. It refuses a migration
// directory whose atlas.sum does not match its files, a file changed after it
// was applied, and a database that has a migration this build does not know.
func Apply(ctx context.Context, db *sql.DB) (applied []string, err error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	if err := migrate.Validate(dir); err != nil {
		return nil, fmt.Errorf("migrations: the migration files do not match atlas.sum: %w", err)
	}
	sums, err := dir.Checksum()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return nil, fmt.Errorf("migrations: taking the migration lock: %w", err)
	}
	defer func() {
		_, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey)
		err = errors.Join(err, uerr)
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version text PRIMARY KEY,
		description text NOT NULL,
		hash text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrations: creating schema_migrations: %w", err)
	}
	done, err := appliedHashes(ctx, conn)
	if err != nil {
		return nil, err
	}
	all, err := dir.Files()
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(all))
	for _, f := range all {
		known[f.Version()] = true
		hash, err := sums.SumByName(f.Name())
		if err != nil {
			return applied, fmt.Errorf("migrations: %s: %w", f.Name(), err)
		}
		if got, ok := done[f.Version()]; ok {
			if got != hash {
				return applied, fmt.Errorf("migrations: %s was changed after it was applied: add a new migration instead", f.Name())
			}
			continue
		}
		if err := applyFile(ctx, conn, f, hash); err != nil {
			return applied, err
		}
		applied = append(applied, f.Version())
	}
	for version := range done {
		if !known[version] {
			return applied, fmt.Errorf("migrations: the database has migration %s, which this build does not know: it is older than the database", version)
		}
	}
	return applied, nil
}

func appliedHashes(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT version, hash FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	done := map[string]string{}
	for rows.Next() {
		var version, hash string
		if err := rows.Scan(&version, &hash); err != nil {
			return nil, err
		}
		done[version] = hash
	}
	return done, rows.Err()
}

// applyFile runs one file and records it in one transaction: PostgreSQL's
// DDL is transactional, so a failing file leaves nothing behind.
func applyFile(ctx context.Context, conn *sql.Conn, f migrate.File, hash string) error {
	stmts, err := f.Stmts()
	if err != nil {
		return fmt.Errorf("migrations: reading %s: %w", f.Name(), err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return errors.Join(fmt.Errorf("migrations: %s: %w", f.Name(), err), tx.Rollback())
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, description, hash) VALUES ($1, $2, $3)`,
		f.Version(), f.Desc(), hash); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// Plan writes into dir a migration named name that takes a database from the
// state dir's files leave it in to the ent schema, and writes nothing when
// they agree; it returns whether it wrote one. It replays dir in a scratch
// database that it creates on the PostgreSQL server of devURL and drops after
// (a whole database, since Atlas calls a database with other schemas dirty).
func Plan(ctx context.Context, devURL string, dir migrate.Dir, name string) (wrote bool, err error) {
	admin, err := sql.Open("pgx", devURL)
	if err != nil {
		return false, err
	}
	defer admin.Close()
	scratch := fmt.Sprintf("migrations_dev_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+scratch); err != nil {
		return false, fmt.Errorf("migrations: creating the scratch database: %w", err)
	}
	defer func() {
		_, derr := admin.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE "+scratch+" WITH (FORCE)")
		err = errors.Join(err, derr)
	}()
	u, err := url.Parse(devURL)
	if err != nil {
		return false, err
	}
	u.Path = "/" + scratch
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return false, err
	}
	defer db.Close()
	m, err := entschema.NewMigrate(entsql.OpenDB(dialect.Postgres, db),
		entschema.WithDir(dir),
		entschema.WithMigrationMode(entschema.ModeReplay),
		entschema.WithDialect(dialect.Postgres),
		entschema.WithFormatter(migrate.DefaultFormatter),
		entschema.WithDropColumn(true),
		entschema.WithDropIndex(true),
		entschema.WithErrNoPlan(true),
		// Both sides are normalized (the files replayed in PostgreSQL, the
		// ent schema through it), so CHECK expressions are compared too:
		// Atlas's default diff matches checks by name and would miss
		// "rating BETWEEN 1 AND 6" replacing "rating BETWEEN 1 AND 5".
		entschema.WithDiffOptions(schema.DiffNormalized()),
	)
	if err != nil {
		return false, err
	}
	switch err := m.NamedDiff(ctx, name, entmigrate.Tables...); {
	case errors.Is(err, migrate.ErrNoPlan):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// Rehash recomputes the checksum file of the migrations folder, after a file
// that has not landed was edited by hand.
func Rehash() error {
	dir, err := migrate.NewLocalDir(Folder)
	if err != nil {
		return err
	}
	sum, err := dir.Checksum()
	if err != nil {
		return err
	}
	return migrate.WriteSumFile(dir, sum)
}
