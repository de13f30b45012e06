package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// runCommand runs one inventoryd command against the database at url and
// returns what it wrote to standard output and standard error.
func runCommand(t *testing.T, url, dataDir string, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	prev := slog.Default() // commands make their logger the default
	defer slog.SetDefault(prev)
	args = append([]string{args[0], "--database-url", url, "--data-dir", dataDir}, args[1:]...)
	err := run(context.Background(), args, func(string) string { return "" }, stdio{strings.NewReader(stdin), &out, &errOut})
	return out.String(), errOut.String(), err
}

func TestGenerateExportImportCommands(t *testing.T) {
	source, data := testdb.URL(t), t.TempDir()
	if out, _, err := runCommand(t, source, data, "", "migrate"); err != nil || out == "" {
		t.Fatalf("migrate: %q, %v", out, err)
	}
	gen := []string{"generate", "--seed", "9", "--companies", "2", "--properties", "3", "--inventories", "2",
		"--environments", "2-3", "--items", "1-4", "--photos", "1", "--files"}
	out, _, err := runCommand(t, source, data, "", gen...)
	if err != nil || !strings.Contains(out, "generated seed 9: 2 companies, 6 properties, 12 inventories") || !strings.Contains(out, "rows/s") {
		t.Fatalf("generate: %q, %v", out, err)
	}
	// The closing note's memory figure is the peak resident set where Linux
	// reports it, and otherwise says plainly that it is something else.
	want := regexp.MustCompile(`; peak RSS [1-9][0-9]* MiB\n`)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		want = regexp.MustCompile(`; Go memory obtained from the OS [0-9]+ MiB \(peak RSS not available here\)\n`)
	}
	if !want.MatchString(out) {
		t.Errorf("generate: %q, want its memory figure to match %s", out, want)
	}
	if _, _, err := runCommand(t, source, data, "", gen...); err == nil || !strings.Contains(err.Error(), "already in the database") {
		t.Errorf("generating the same seed twice: got %v, want a refusal", err)
	}

	// Into a folder that does not exist yet, as the README's example does;
	// the first company generate printed.
	exportDir := filepath.Join(t.TempDir(), "out")
	file := filepath.Join(exportDir, "company.ndjson")
	company := printedCompanies(t, out)[0]
	if _, errOut, err := runCommand(t, source, data, "", "export", "--company", company, "--files", exportDir, file); err != nil || !strings.Contains(errOut, "exported 6 inventories") {
		t.Fatalf("export: %q, %v", errOut, err)
	}
	exported, _ := os.ReadFile(file)
	if !strings.Contains(string(exported), `"PdfFile":"pdf/`) {
		t.Fatal("the export names no PDF file")
	}

	// Into a new database: files resolve next to the import file.
	target, targetData := testdb.URL(t), t.TempDir()
	out, importLog, err := runCommand(t, target, targetData, "", "import", file)
	if err != nil || !strings.Contains(out, "imported 6 inventories (6 created, 0 updated), 0 unchanged, rejected 0") {
		t.Fatalf("import: %q, %v\n%s", out, err, importLog)
	}
	// Its audit line is the server's JSON, not Go's default text logger.
	if !strings.Contains(importLog, `{"time":`) || !strings.Contains(importLog, `"msg":"tenancy: unrestricted context"`) {
		t.Errorf("import's log is not JSON with its audit line:\n%s", importLog)
	}
	again, _, err := runCommand(t, target, targetData, "", "export", "--company", company, "--files", t.TempDir())
	if err != nil || again != string(exported) {
		t.Errorf("export of the imported data differs from the original export (%v)", err)
	}

	// From standard input, with a bad line in the middle.
	lines := strings.Split(strings.TrimSpace(string(exported)), "\n")
	lines[2] = strings.Replace(lines[2], `"InventoryType":`, `"InventoryType":9,"x":`, 1)
	out, errOut, err := runCommand(t, target, targetData, strings.Join(lines, "\n"), "import", "--files", exportDir, "-")
	if err == nil || !strings.Contains(err.Error(), "1 record(s) rejected") {
		t.Errorf("import with a bad line: got %v, want an error counting it", err)
	}
	if !strings.Contains(errOut, "line 3:") || !strings.Contains(out, "(0 created, 0 updated), 5 unchanged, rejected 1") {
		t.Errorf("import with a bad line: stdout %q, stderr %q", out, errOut)
	}

	// A signed inventory changes only when the import is told to correct
	// it, and each correction is an audit line.
	signed := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"IsSigned":true`) })
	changed := regexp.MustCompile(`"RentalPrice":"[0-9.]+"`).ReplaceAllString(lines[signed], `"RentalPrice":"1234.00"`)
	if _, errOut, err := runCommand(t, target, targetData, changed, "import", "--files", exportDir, "-"); err == nil ||
		!strings.Contains(errOut, "is signed and this line changes it") {
		t.Errorf("changing a signed inventory: %v, stderr %q; want it refused", err, errOut)
	}
	out, errOut, err = runCommand(t, target, targetData, changed, "import", "--correct-signed", "--files", exportDir, "-")
	if err != nil || !strings.Contains(out, "(0 created, 1 updated), 0 unchanged, rejected 0") ||
		!strings.Contains(errOut, `"msg":"freeze: a signed inventory was corrected"`) || !strings.Contains(errOut, "--correct-signed") {
		t.Errorf("correcting a signed inventory: %v, stdout %q, stderr %q; want it taken and audited", err, out, errOut)
	}
}

// The README's export, imported again into the database it came from (the
// demo's), writes nothing: its 60 inventories are counted unchanged, and
// no record event (INVENTORY_UPDATED to subscribers and webhooks) or new
// version follows.
func TestReimportingTheREADMEsExportWritesNothing(t *testing.T) {
	url, data := testdb.DemoRecords.URL(t), t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	company := datagen.DemoCompanies[0].String()
	written := func() (events, versions int) {
		t.Helper()
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
		if events, err = st.Client.RecordEvent.Query().Count(ctx); err != nil {
			t.Fatal(err)
		}
		invs, err := st.Client.Inventory.Query().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, inv := range invs {
			versions += inv.Version
		}
		return events, versions
	}
	if _, errOut, err := runCommand(t, url, data, "", "export", "--company", company, "--files", out, filepath.Join(out, "records.ndjson")); err != nil ||
		!strings.Contains(errOut, "exported 60 inventories") {
		t.Fatalf("export: %q, %v", errOut, err)
	}
	events, versions := written()
	stdout, errOut, err := runCommand(t, url, data, "", "import", filepath.Join(out, "records.ndjson"))
	if want := "imported 0 inventories (0 created, 0 updated), 60 unchanged, rejected 0, in "; err != nil || !strings.Contains(stdout, want) {
		t.Errorf("import of the unchanged export: %q, %v, want %q…\n%s", stdout, err, want, errOut)
	}
	if e, v := written(); e != events || v != versions {
		t.Errorf("after the import: %d record events and versions summing to %d; before, %d and %d: want nothing written", e, v, events, versions)
	}
}

func TestPeakRSSIsReadFromProcStatus(t *testing.T) {
	for _, tt := range []struct {
		status string
		kib    int64
		ok     bool
	}{
		{"Name:\tinventoryd\nVmPeak:\t 2000000 kB\nVmHWM:\t  110592 kB\nVmRSS:\t   90000 kB\n", 110592, true},
		{"Name:\tinventoryd\nVmRSS:\t   90000 kB\n", 0, false}, // no VmHWM line
		{"VmHWM:\t  lots kB\n", 0, false},
		{"VmHWM:\t  110592 MB\n", 0, false},
	} {
		if kib, ok := peakRSS(tt.status); kib != tt.kib || ok != tt.ok {
			t.Errorf("peakRSS(%q) = %d, %v; want %d, %v", tt.status, kib, ok, tt.kib, tt.ok)
		}
	}
}

func TestCommandsRefuseBadArguments(t *testing.T) {
	url, data := testdb.URL(t), t.TempDir()
	for _, args := range [][]string{
		{"export", "--company", "acme"},
		{"import"},
		{"generate", "--items", "5-2"},
		{"migrate", "extra"},
	} {
		if _, _, err := runCommand(t, url, data, "", args...); err == nil {
			t.Errorf("%v: got no error", args)
		}
	}
	err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, stdio{nil, &bytes.Buffer{}, &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: got %v", err)
	}
}

// printedCompanies are the company ids generate printed, one a line.
func printedCompanies(t *testing.T, out string) []string {
	t.Helper()
	var ids []string
	for _, m := range regexp.MustCompile(`(?m)^company ([0-9a-f-]{36})$`).FindAllStringSubmatch(out, -1) {
		ids = append(ids, m[1])
	}
	if len(ids) == 0 {
		t.Fatalf("generate printed no company: %q", out)
	}
	return ids
}

// generate writes companies of its own, drawn from the seed (the same seed,
// the same companies; never the demo's well-known ids), and prints them;
// asked for the demo companies, it writes into them, and a second dataset
// written into a company repeats none of its property codes.
func TestGenerateMakesCompaniesOfItsOwnAndNoDuplicateCodes(t *testing.T) {
	gen := func(url, data string, seed string, more ...string) []string {
		t.Helper()
		args := append([]string{"generate", "--seed", seed, "--companies", "2", "--properties", "9", "--inventories", "1",
			"--environments", "1-1", "--items", "1-1", "--photos", "0"}, more...)
		out, _, err := runCommand(t, url, data, "", args...)
		if err != nil {
			t.Fatalf("generate %v: %q, %v", args, out, err)
		}
		return printedCompanies(t, out)
	}
	url, data := testdb.URL(t), t.TempDir()
	own := gen(url, data, "3")
	again := gen(testdb.URL(t), t.TempDir(), "3")
	other := gen(url, data, "4")
	demo := []string{datagen.DemoCompanies[0].String(), datagen.DemoCompanies[1].String()}
	if len(own) != 2 || !slices.Equal(own, again) || slices.ContainsFunc(own, func(id string) bool { return slices.Contains(demo, id) || slices.Contains(other, id) }) {
		t.Errorf("companies of seeds 3, 3 again and 4: %v, %v, %v; want two of seed 3's own, the same again, none the demo's %v or seed 4's", own, again, other, demo)
	}
	if got := gen(url, data, "5", "--demo-companies"); !slices.Equal(got, demo) {
		t.Errorf("--demo-companies: %v, want %v", got, demo)
	}
	gen(url, data, "6", "--demo-companies")

	st := testdb.OpenURL(t, url)
	props, err := st.Client.Property.Query().All(tenant.Unrestricted(context.Background(), "test: every company's codes"))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, p := range props {
		if p.Code != "" { // a property without a code has none to repeat
			codes[p.CompanyID.String()+" "+p.Code]++
		}
	}
	for code, n := range codes {
		if n > 1 {
			t.Errorf("company and code %s: %d properties", code, n)
		}
	}
	if want := 2*9*4 - 2*4; len(codes) != want { // one property in 7 has no code
		t.Errorf("%d coded properties, want %d", len(codes), want)
	}
}
