package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// importLines are n valid import lines of one company, each a new inventory.
func importLines(n int) []string {
	company := uuid.NewString()
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"CompanyId":%q,"InventoryId":%q,"InventoryType":1,"RentalPrice":"%d.00",`+
			`"IsSigned":false,"IsRemoteSigned":false,"CreationDate":"2024-03-01T10:00:00Z",`+
			`"Property":{"PropertyId":%q,"Address":"Calle %d","City":"Cali","PropertyType":"Casa"},`+
			`"EnvironmentDiagnostics":[{"EnvironmentName":"Sala","Description":"","ItemDiagnostic":[`+
			`{"ItemName":"Piso","Description":"","Rating":4,"Material":{"MaterialName":"Madera"},"Photo":[{"StorageReference":"%s.jpg"}]}]}]}`,
			company, uuid.NewString(), 1_000_000+i, uuid.NewString(), i, uuid.NewString()))
	}
	return lines
}

// `inventoryd import -` whose database goes down after ten lines prints the
// summary of what it committed, rejects none of the lines it could not
// write, and fails saying where it stopped and why; run again once the
// database is back, it imports the whole input (before, it rejected every
// remaining line as bad, printed no summary, and exited 1 the same way as for
// bad lines). Runs in the PostgreSQL test run only: it starts a cluster.
func TestImportCommandStopsWithASummaryWhenTheDatabaseGoesDown(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("starts a PostgreSQL cluster: runs when " + testdb.EnvURL + " is set")
	}
	c := testdb.StartCluster(t)
	url, data := c.URL(), t.TempDir()
	lines := importLines(20)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	pr, pw := io.Pipe()
	var out, errOut bytes.Buffer
	finished := make(chan error, 1)
	go func() {
		err := run(context.Background(), []string{"import", "--database-url", url, "--data-dir", data, "-"},
			func(string) string { return "" }, stdio{pr, &out, &errOut})
		pr.Close() // the rest of the input is not read: let the writer go
		finished <- err
	}()
	go io.WriteString(pw, strings.Join(lines[:10], "\n")+"\n")
	// The database goes down once the first ten lines are committed.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM inventories`).Scan(&n); err == nil && n == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first ten lines were not imported")
		}
	}
	c.Stop()
	go func() {
		io.WriteString(pw, strings.Join(lines[10:], "\n")+"\n")
		pw.Close()
	}()
	select {
	case err = <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("the import did not end with its database down")
	}

	if err == nil || !strings.Contains(err.Error(), "import stopped at line 11: the database is unavailable") {
		t.Errorf("error %v; want it to say the import stopped at line 11 because the database is unavailable", err)
	}
	if want := "imported 10 inventories (10 created, 0 updated), 0 unchanged, rejected 0, in "; !strings.Contains(out.String(), want) ||
		!strings.Contains(out.String(), "; stopped at line 11") {
		t.Errorf("standard output %q; want the summary %q…, stopped at line 11", out.String(), want)
	}
	if strings.Contains(errOut.String(), "line ") {
		t.Errorf("lines were rejected: %s", errOut.String())
	}

	c.Start()
	stdout, _, err := runCommand(t, url, data, strings.Join(lines, "\n"), "import", "-")
	if err != nil || !strings.Contains(stdout, "imported 10 inventories (10 created, 0 updated), 10 unchanged, rejected 0") {
		t.Errorf("import once the database is back: %q, %v", stdout, err)
	}
}
