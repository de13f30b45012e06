// Command gen writes the next versioned PostgreSQL migration when the ent
// schema has changed:
//
//	go run ./internal/migrations/gen [-dev-url postgres://...] NAME
//
// It replays the existing migrations in a scratch database on the
// development server, compares the result with the ent schema, and writes the
// difference to internal/migrations/postgres as NAME, updating atlas.sum.
//
// A new file that needs a statement of its own (one that copies data into a
// new column, say) is edited before it lands; then
//
//	go run ./internal/migrations/gen -rehash
//
// records the edit in atlas.sum. After an upgrade of River,
//
//	go run ./internal/migrations/gen -river
//
// writes River's migrations the folder lacks (its job tables).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"ariga.io/atlas/sql/migrate"

	"github.com/propertyrecords/inventory/internal/migrations"
)

func main() {
	devURL := flag.String("dev-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"PostgreSQL server to replay the migrations on, in a scratch database created and dropped")
	rehash := flag.Bool("rehash", false, "only recompute atlas.sum after editing a file that has not landed")
	river := flag.Bool("river", false, "only write River's migrations the folder lacks, and atlas.sum")
	flag.Parse()
	if *river {
		if err := writeRiver(); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *rehash {
		if err := migrations.Rehash(); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/migrations/gen [-dev-url URL] NAME")
		os.Exit(2)
	}
	dir, err := migrate.NewLocalDir(migrations.Folder)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen: run it from the repository root:", err)
		os.Exit(1)
	}
	wrote, err := migrations.Plan(context.Background(), *devURL, dir, flag.Arg(0))
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	case wrote:
		fmt.Println("wrote a new migration in", migrations.Folder)
	default:
		fmt.Println("the migrations already match the ent schema: nothing written")
	}
}

// writeRiver writes River's migrations newer than the folder's, then
// atlas.sum.
func writeRiver() error {
	dir, err := migrate.NewLocalDir(migrations.Folder)
	if err != nil {
		return fmt.Errorf("run it from the repository root: %w", err)
	}
	after, err := migrations.LastRiverVersion(dir)
	if err != nil {
		return err
	}
	names, err := migrations.RiverFiles(dir, after, time.Now())
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Println("wrote", n)
	}
	if len(names) == 0 {
		fmt.Printf("River's migrations are all there (up to %03d): nothing written\n", after)
		return nil
	}
	return migrations.Rehash()
}
