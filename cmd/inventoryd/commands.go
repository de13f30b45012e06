package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/transfer"
	"github.com/propertyrecords/inventory/internal/verify"
	"github.com/propertyrecords/inventory/internal/webhooks"
)

var (
	migrateCommand  = command{name: "migrate", summary: "brings the database schema up to date and exits (PostgreSQL: applies the versioned migrations)"}
	generateCommand = command{name: "generate", summary: "writes a deterministic synthetic dataset straight into the database", reportsProgress: true}
	importCommand   = command{name: "import", args: "FILE|-", summary: "loads inventories from newline-delimited JSON (docs/import-format.md)", reportsProgress: true}
	exportCommand   = command{name: "export", args: "[FILE]", summary: "writes one company's inventories as newline-delimited JSON"}
	verifyCommand   = command{name: "verify", summary: "re-hashes every stored PDF and photo against its recorded SHA-256 and lists files no record names; exits 1 on any changed or missing; --repair removes strays over an hour old"}
	companyCommand  = command{name: "company", summary: "names a management company (--id UUID --name NAME): the name both PDFs print and GraphQL's company answers"}
	commands        = []command{serveCommand, migrateCommand, generateCommand, importCommand, exportCommand, verifyCommand, companyCommand, apikeyCommand, healthcheckCommand}
)

// openStore opens and migrates the configured database.
func openStore(ctx context.Context, cfg Config, std stdio) (*store.Store, error) {
	// What the command logs (the audit lines of its writes among it) is the
	// same JSON as the server's.
	slog.SetDefault(newLogger(std.errOut, cfg))
	if err := cfg.checkDatabaseFolder(); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.storeOptions()...)
	if err != nil {
		return nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	for _, v := range applied {
		fmt.Fprintln(std.errOut, "applied migration", v)
	}
	return st, nil
}

// openFiles opens the configured file store, as the server does.
func openFiles(ctx context.Context, cfg Config) (*files.Store, error) {
	if err := cfg.checkFileFolders(); err != nil {
		return nil, err
	}
	key, err := cfg.signingKey()
	if err != nil {
		return nil, err
	}
	return files.Open(ctx, files.Options{URL: cfg.BlobURL, DataDir: cfg.DataDir, SigningKey: key})
}

func migrateCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	cfg, rest, err := parseCommandConfig(migrateCommand, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("migrate takes no arguments, got %q", rest)
	}
	if err := cfg.checkDatabaseFolder(); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.storeOptions()...)
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	switch {
	case st.Dialect() != dialect.Postgres:
		fmt.Fprintln(std.out, "SQLite schema migrated automatically")
	case len(applied) == 0:
		fmt.Fprintln(std.out, "schema up to date: no pending migration")
	default:
		fmt.Fprintf(std.out, "applied %d migration(s): %s\n", len(applied), strings.Join(applied, ", "))
	}
	return nil
}

// span is a flag of the form MIN-MAX (or N for MIN = MAX).
type span struct{ min, max *int }

func (s span) String() string {
	if s.min == nil {
		return ""
	}
	return fmt.Sprintf("%d-%d", *s.min, *s.max)
}

func (s span) Set(v string) error {
	lo, hi, found := strings.Cut(v, "-")
	if !found {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || a < 0 || b < a {
		return fmt.Errorf("want MIN-MAX with 0 <= MIN <= MAX, got %q", v)
	}
	*s.min, *s.max = a, b
	return nil
}

func generateCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	size := datagen.Demo
	seed := uint64(1)
	var withFiles, demoCompanies bool
	cmd := generateCommand
	cmd.flags = func(fs *flag.FlagSet) {
		fs.Uint64Var(&seed, "seed", seed, "seed: the same seed and size give the same records, ids included")
		fs.IntVar(&size.Companies, "companies", size.Companies, "companies")
		fs.IntVar(&size.PropertiesPerCompany, "properties", size.PropertiesPerCompany, "properties per company")
		fs.IntVar(&size.InventoriesPerProperty, "inventories", size.InventoriesPerProperty, "inventories per property")
		fs.Var(span{&size.MinEnvironments, &size.MaxEnvironments}, "environments", "environments per inventory, MIN-MAX")
		fs.Var(span{&size.MinItems, &size.MaxItems}, "items", "items per environment, MIN-MAX")
		fs.IntVar(&size.MaxPhotos, "photos", size.MaxPhotos, "at most this many photos per item")
		fs.BoolVar(&withFiles, "files", false, "also render each signed inventory's PDF and store each photo (slow for large sizes)")
		fs.BoolVar(&demoCompanies, "demo-companies", false, "write the first two companies' records into the demo companies (11111111-…, 22222222-…) rather than companies of the dataset's own, drawn from the seed")
	}
	cfg, rest, err := parseCommandConfig(cmd, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("generate takes no arguments, got %q", rest)
	}
	if err := size.Validate(); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, std)
	if err != nil {
		return err
	}
	defer st.Close()
	var fstore *files.Store
	if withFiles {
		if fstore, err = openFiles(ctx, cfg); err != nil {
			return err
		}
		defer fstore.Close()
	}
	instruments := metrics.New()
	stopMetrics, err := serveJobMetrics(cfg.MetricsAddr, instruments)
	if err != nil {
		return err
	}
	defer stopMetrics()
	properties := int64(size.Companies * size.PropertiesPerCompany)
	shown := newProgress(std, false, instruments.Job("generate", "properties", properties), "generating", "properties", properties)
	started := time.Now()
	opts := []datagen.Option{datagen.WithProgress(func(s datagen.Stats) { shown.set(int64(s.Properties)) }), datagen.WithTimeZone(cfg.TimeZone)}
	if !demoCompanies {
		opts = append(opts, datagen.OwnCompanies())
	}
	stats, err := datagen.Load(ctx, st.Client, fstore, seed, size, opts...)
	shown.clear()
	if err != nil {
		return err
	}
	if err := st.Analyze(ctx); err != nil {
		return err
	}
	elapsed := time.Since(started)
	rows := stats.Rows()
	fmt.Fprintf(std.out, "generated seed %d: %d companies, %d properties, %d inventories, %d environments, %d items, %d photos\n",
		seed, stats.Companies, stats.Properties, stats.Inventories, stats.Environments, stats.Items, stats.Photos)
	// The companies' ids, which every request names (X-Company-Id).
	for _, id := range stats.CompanyIDs {
		fmt.Fprintf(std.out, "company %s\n", id)
	}
	fmt.Fprintf(std.out, "%d rows in %s: %.0f rows/s; %s\n",
		rows, elapsed.Round(time.Millisecond), float64(rows)/elapsed.Seconds(), memoryNote())
	return nil
}

// memoryNote says how much memory the process used: its peak resident set
// where the system reports one (Linux's VmHWM), which is what "peak memory"
// means; elsewhere what the Go runtime has obtained from the OS, named as
// such, since that is neither a peak nor what is resident.
func memoryNote() string {
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		if kib, ok := peakRSS(string(status)); ok {
			return fmt.Sprintf("peak RSS %.0f MiB", float64(kib)/1024)
		}
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	return fmt.Sprintf("Go memory obtained from the OS %.0f MiB (peak RSS not available here)", float64(mem.Sys)/(1<<20))
}

// peakRSS reads the peak resident set size, in KiB, from the text of Linux's
// /proc/self/status ("VmHWM:   110592 kB").
func peakRSS(status string) (kib int64, ok bool) {
	for _, line := range strings.Split(status, "\n") {
		if rest, found := strings.CutPrefix(line, "VmHWM:"); found {
			fields := strings.Fields(rest)
			if len(fields) != 2 || fields[1] != "kB" {
				return 0, false
			}
			n, err := strconv.ParseInt(fields[0], 10, 64)
			return n, err == nil && n > 0
		}
	}
	return 0, false
}

func importCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	var filesDir string
	var quiet, correctSigned bool
	cmd := importCommand
	cmd.flags = func(fs *flag.FlagSet) {
		fs.StringVar(&filesDir, "files", "", "folder that PdfFile and File paths are relative to (default: FILE's folder, or . for -)")
		fs.BoolVar(&quiet, "quiet", false, "no progress line on a terminal")
		fs.BoolVar(&correctSigned, "correct-signed", false, "let lines change inventories that are signed (refused otherwise); each correction is an audit line")
	}
	cfg, rest, err := parseCommandConfig(cmd, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("import takes one FILE, or - for standard input")
	}
	in, size := std.in, int64(-1)
	if name := rest[0]; name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil {
			size = info.Size()
		}
		in = f
		if filesDir == "" {
			filesDir = filepath.Dir(name)
		}
	} else if filesDir == "" {
		filesDir = "."
	}
	st, err := openStore(ctx, cfg, std)
	if err != nil {
		return err
	}
	defer st.Close()
	fstore, err := openFiles(ctx, cfg)
	if err != nil {
		return err
	}
	defer fstore.Close()
	// The import's writes tell the webhooks as the API's do: each event's
	// deliveries and their jobs commit with it, and a server on the
	// database sends them (this client only inserts).
	inserter, err := jobs.New(ctx, st, jobs.Options{})
	if err != nil {
		return err
	}
	defer inserter.Stop(context.WithoutCancel(ctx))
	webhooks.New(st.Client, inserter, webhooks.Options{}).EnqueueOn(st.Client)
	instruments := metrics.New()
	stopMetrics, err := serveJobMetrics(cfg.MetricsAddr, instruments)
	if err != nil {
		return err
	}
	defer stopMetrics()
	job := instruments.Job("import", "bytes", size)
	shown := newProgress(std, quiet, job, "importing", "bytes", size)
	im := &transfer.Importer{
		Client: st.Client, Files: fstore, FilesDir: filesDir, CorrectSigned: correctSigned,
		Rejected: func(r transfer.Rejection) {
			job.Rejected()
			shown.clear()
			fmt.Fprintln(std.errOut, r)
		},
		Progress: shown.set,
		// The photos' thumbnails are made by a server's job, off the
		// import: its decodes are most of an import's CPU.
		Thumbnails: inserter,
	}
	sum, err := im.Import(ctx, in)
	shown.clear()
	if err == nil && sum.Created+sum.Updated > 0 {
		if err = st.Analyze(ctx); err != nil {
			err = fmt.Errorf("the import is done, but refreshing the planner's statistics failed: %w", err)
		}
	}
	// The summary comes even when the run stopped (the database went down,
	// or the import was interrupted): what was committed before, and which
	// lines were rejected, is what the operator needs to go on.
	fmt.Fprintln(std.out, sum)
	if len(sum.Rejections) > 0 {
		rejected := fmt.Errorf("%d record(s) rejected: see the lines above", len(sum.Rejections))
		if err != nil {
			return fmt.Errorf("%w (before it, %w)", err, rejected)
		}
		return rejected
	}
	return err
}

func verifyCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	var repair bool
	cmd := verifyCommand
	cmd.flags = func(fs *flag.FlagSet) {
		fs.BoolVar(&repair, "repair", false, "remove the files no record names and the temporary files of unfinished writes, if written over an hour ago (never a file a record names)")
	}
	cfg, rest, err := parseCommandConfig(cmd, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("verify takes no arguments, got %q", rest)
	}
	st, err := openStore(ctx, cfg, std)
	if err != nil {
		return err
	}
	defer st.Close()
	fstore, err := openFiles(ctx, cfg)
	if err != nil {
		return err
	}
	defer fstore.Close()
	sum, err := verify.Run(ctx, st.Client, fstore, verify.Options{
		Report: func(p verify.Problem) { fmt.Fprintln(std.out, p) },
		Stray:  func(s verify.Stray) { fmt.Fprintln(std.out, s) },
		Repair: repair,
	})
	if err != nil {
		return fmt.Errorf("verify stopped after it %s: %w", sum, err)
	}
	fmt.Fprintln(std.out, sum)
	if strays := sum.Unnamed + sum.Leftovers - sum.Removed; strays > 0 && !repair {
		fmt.Fprintf(std.out, "%d file(s) no record accounts for: `verify --repair` removes those written over an hour ago\n", strays)
	}
	if !sum.OK() {
		return fmt.Errorf("%d stored file(s) do not match their records", sum.Changed+sum.Missing)
	}
	return nil
}

func exportCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	var company, filesDir string
	cmd := exportCommand
	cmd.flags = func(fs *flag.FlagSet) {
		fs.StringVar(&company, "company", "", "UUID of the company to export (required)")
		fs.StringVar(&filesDir, "files", "", "also copy the stored PDFs and photos into this folder, named relative to it in PdfFile and File")
	}
	cfg, rest, err := parseCommandConfig(cmd, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(company)
	if err != nil {
		return fmt.Errorf("--company: want the company's UUID, got %q", company)
	}
	if len(rest) > 1 {
		return fmt.Errorf("export takes at most one FILE")
	}
	out := std.out
	if len(rest) == 1 && rest[0] != "-" {
		// As the files folder is made when needed, so is the file's.
		if err := os.MkdirAll(filepath.Dir(rest[0]), 0o755); err != nil {
			return err
		}
		f, err := os.Create(rest[0])
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	st, err := openStore(ctx, cfg, std)
	if err != nil {
		return err
	}
	defer st.Close()
	ex := &transfer.Exporter{Client: st.Client}
	if filesDir != "" {
		if ex.Files, err = openFiles(ctx, cfg); err != nil {
			return err
		}
		defer ex.Files.Close()
		ex.FilesDir = filesDir
	}
	n, err := ex.Export(ctx, id, out)
	if err != nil {
		return err
	}
	if f, ok := out.(*os.File); ok && f != os.Stdout {
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(std.errOut, "exported %d inventories of company %s\n", n, id)
	return nil
}

func companyCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	var company, name string
	cmd := companyCommand
	cmd.flags = func(fs *flag.FlagSet) {
		fs.StringVar(&company, "id", "", "UUID of the company (required)")
		fs.StringVar(&name, "name", "", "its name, 1 to 200 characters, as its reports print it (required)")
	}
	cfg, rest, err := parseCommandConfig(cmd, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("company takes no arguments, got %q: quote a name of several words", rest)
	}
	id, err := uuid.Parse(company)
	if err != nil {
		return fmt.Errorf("--id: want the company's UUID, got %q", company)
	}
	if err := records.ValidateCompanyName("--name", name); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, std)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx = tenant.Unrestricted(ctx, "inventoryd company: naming a company")
	if err := records.NameCompany(ctx, st.Client, id, name); err != nil {
		return err
	}
	fmt.Fprintf(std.out, "company %s is named %q\n", id, name)
	return nil
}
