package migrations

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"ariga.io/atlas/sql/migrate"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// riverFileName matches the files RiverFiles writes; the group is River's
// migration version.
var riverFileName = regexp.MustCompile(`^\d+_river_(\d{3})_[a-z0-9_]+\.sql$`)

// RiverVersions are River's migration versions, oldest first, as the River
// module this build links knows them (rivermigrate, PostgreSQL's SQL).
func RiverVersions() ([]rivermigrate.Migration, error) {
	// The driver only hands out its embedded SQL here: no database.
	m, err := rivermigrate.New(riverdatabasesql.New(nil), nil)
	if err != nil {
		return nil, err
	}
	return m.AllVersions(), nil
}

// RiverFiles writes into dir one file per River migration version above
// after (0: all), named from base on, one second apart, and returns their
// names. River's job tables are the service's schema like any other, made
// by `inventoryd migrate` with the same lock, transaction per file and
// atlas.sum as ent's: one migration history, read by a DBA as plain SQL.
// Each file is the version's SQL with River's schema placeholder left
// empty (the search_path's schema, as River's own migrator does with no
// Config.Schema), then the row River's migrator records in
// river_migration, so that River's tooling (rivermigrate, the river CLI,
// River UI) sees the version applied.
func RiverFiles(dir migrate.Dir, after int, base time.Time) ([]string, error) {
	versions, err := RiverVersions()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, v := range versions {
		if v.Version <= after {
			continue
		}
		sql := strings.ReplaceAll(v.SQLUp, "/* TEMPLATE: schema */", "")
		if strings.Contains(sql, "TEMPLATE") {
			return nil, fmt.Errorf("migrations: River's migration %03d has a template this export does not fill", v.Version)
		}
		record := fmt.Sprintf("INSERT INTO river_migration (line, version) VALUES ('main', %d);", v.Version)
		if v.Version < 5 { // river_migration has no line before version 005
			record = fmt.Sprintf("INSERT INTO river_migration (version) VALUES (%d);", v.Version)
		}
		content := fmt.Sprintf("-- River's migration %03d (%s), exported by `go run ./internal/migrations/gen -river`: do not edit.\n\n%s\n\n"+
			"-- Recorded for River's own migrator, as rivermigrate does.\n%s\n",
			v.Version, v.Name, strings.TrimSpace(sql), record)
		name := fmt.Sprintf("%s_river_%03d_%s.sql", base.Add(time.Duration(len(names))*time.Second).UTC().Format("20060102150405"),
			v.Version, strings.ReplaceAll(strings.ToLower(v.Name), " ", "_"))
		if err := dir.WriteFile(name, []byte(content)); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// LastRiverVersion is the newest River version among dir's files (0:
// none): after an upgrade of River, gen -river writes the ones after it.
func LastRiverVersion(dir migrate.Dir) (int, error) {
	files, err := dir.Files()
	if err != nil {
		return 0, err
	}
	last := 0
	for _, f := range files {
		if m := riverFileName.FindStringSubmatch(f.Name()); m != nil {
			v, err := strconv.Atoi(m[1])
			if err != nil {
				return 0, err
			}
			last = max(last, v)
		}
	}
	return last, nil
}
