package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// start runs the real program on a free port with a copy of the demo
// records, and checks that it closes cleanly after the test.
func start(t *testing.T) *Main {
	t.Helper()
	m := launch(t)
	closeAfter(t, m)
	return m
}

func closeAfter(t *testing.T, m *Main) {
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// launch runs the real program on a free port with a copy of the demo
// records (testdb.DemoRecords: loading them is most of a start's time under
// the race detector, and only TestServerStartsWithDemoDataAndServesTheTree
// is about that); the caller closes it.
func launch(t *testing.T) *Main {
	t.Helper()
	return launchWith(t, nil)
}

// launchWith is launch with the configuration adjusted first.
func launchWith(t *testing.T, adjust func(*Config)) *Main {
	t.Helper()
	return launchLogged(t, slog.New(slog.NewTextHandler(io.Discard, nil)), adjust)
}

// launchLogged is launchWith, logging to log.
func launchLogged(t *testing.T, log *slog.Logger, adjust func(*Config)) *Main {
	t.Helper()
	return launchOn(t, testdb.DemoRecords.URL(t), log, adjust)
}

// launchOn runs the real program on a free port with the database at url.
func launchOn(t *testing.T, url string, log *slog.Logger, adjust func(*Config)) *Main {
	t.Helper()
	m := mainOn(t, url, log, adjust)
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// mainOn is the program launchOn runs, not started.
func mainOn(t *testing.T, url string, log *slog.Logger, adjust func(*Config)) *Main {
	t.Helper()
	dir := t.TempDir()
	cfg, err := parseConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--shutdown-delay", "0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = url
	if adjust != nil {
		adjust(&cfg)
	}
	return &Main{Config: cfg, Log: log}
}

func get(t *testing.T, m *Main, path string) (*http.Response, string) {
	t.Helper()
	res, body := (&apitest.Server{URL: m.URL()}).Get(t, path, nil)
	return res, string(body)
}

func TestServerStartsWithDemoDataAndServesTheTree(t *testing.T) {
	var logs apitest.LogBuffer
	// Asked for: on PostgreSQL the demo is off unless asked.
	m := mainOn(t, testdb.URL(t), logs.Logger(slog.LevelInfo), func(c *Config) { c.Demo = "on" })
	started := make(chan error, 1)
	go func() { started <- m.Run(context.Background()) }()
	closeAfter(t, m)

	// While the demo loads, the address the log names answers: the starting
	// page, alive but not ready, and every other request told to come back.
	announced := regexp.MustCompile(`"msg":"loading demo data \(first start\)[^"]*","url":"([^"]+)"`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if found := announced.FindStringSubmatch(logs.String()); found != nil {
			base = strings.TrimSuffix(found[1], "/")
		}
	}
	if base == "" {
		t.Fatalf("no \"loading demo data (first start)\" line naming the address:\n%s", logs.String())
	}
	starting := &apitest.Server{URL: base}
	if res, body := starting.Get(t, "/", nil); res.StatusCode != http.StatusOK || !strings.Contains(string(body), "Loading the demo data") {
		t.Errorf("the IDE's address while the demo loads: %d %s; want the starting page", res.StatusCode, body)
	}
	if res, _ := starting.Get(t, "/readyz", nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while the demo loads: %d; want 503", res.StatusCode)
	}
	res, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"{__typename}"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "UNAVAILABLE") {
		t.Errorf("/graphql while the demo loads: %d (Retry-After %q) %s; want 503, told when to come back", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"msg":"loaded demo data"`) {
		t.Errorf("an empty database at start: no \"loaded demo data\" line in the log:\n%s", logs.String())
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if res, body := get(t, m, path); res.StatusCode != http.StatusOK || !strings.Contains(body, `"ok"`) {
			t.Errorf("%s: got %d %s, want 200 ok", path, res.StatusCode, body)
		}
	}

	var out struct {
		Inventories struct {
			TotalCount int
			Edges      []struct {
				Node struct {
					Environments []struct {
						Items []struct{ ID string }
					}
				}
			}
		}
	}
	(&apitest.Server{URL: m.URL()}).MustData(t, datagen.DemoCompanies[0].String(), ide.ExampleQuery, nil, &out)
	if out.Inventories.TotalCount == 0 || len(out.Inventories.Edges) == 0 ||
		len(out.Inventories.Edges[0].Node.Environments) == 0 || len(out.Inventories.Edges[0].Node.Environments[0].Items) == 0 {
		t.Errorf("example query on the demo data: got %+v, want a whole tree", out)
	}

	// The REST endpoints answer on the same data.
	company := datagen.DemoCompanies[0].String()
	for _, path := range []string{
		"/api/v1/inventories?x-company-id=" + company,
		"/property/get_properties/" + company + "?page=1&sorter=desc",
		"/openapi.json",
	} {
		if res, body := get(t, m, path); res.StatusCode != http.StatusOK || len(body) < 100 {
			t.Errorf("%s: got %d %s", path, res.StatusCode, body)
		}
	}

	// GET works too, as GraphQL over HTTP allows for queries.
	res2, typename := get(t, m, "/graphql?query=%7B__typename%7D")
	if res2.StatusCode != http.StatusOK || !strings.Contains(typename, `"Query"`) {
		t.Errorf("GET /graphql: got %d %s", res2.StatusCode, typename)
	}
}

var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`)

func TestIDELoadsNothingFromOutside(t *testing.T) {
	m := start(t)
	res, page := get(t, m, "/")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "GraphiQL") {
		t.Fatalf("/: got %d", res.StatusCode)
	}
	if externalRef.MatchString(page) {
		t.Errorf("the IDE page references an outside URL: %s", externalRef.FindString(page))
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q: want same-origin only", csp)
	}
	if !strings.Contains(page, datagen.DemoCompanies[0].String()) || !strings.Contains(page, "NestedInventories") {
		t.Errorf("the IDE does not open on the example query with the demo company's header")
	}
	for _, asset := range regexp.MustCompile(`(?:src|href)="(/ide/[^"]+)"`).FindAllStringSubmatch(page, -1) {
		res, body := get(t, m, asset[1])
		if res.StatusCode != http.StatusOK || len(body) < 1000 {
			t.Errorf("%s: got %d with %d bytes", asset[1], res.StatusCode, len(body))
		}
		if strings.Contains(body, "cdn.jsdelivr") || strings.Contains(body, "unpkg.com") {
			t.Errorf("%s loads from a CDN", asset[1])
		}
	}
}

func TestHelpListsEveryVariable(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, func(string) string { return "" }, stdio{nil, &out, &out})
	if err != errHelp {
		t.Fatalf("run --help: got %v, want errHelp", err)
	}
	for _, v := range []string{"INVENTORY_ADDR", "INVENTORY_DATABASE_URL", "INVENTORY_DATA_DIR", "INVENTORY_LOG_LEVEL", "INVENTORY_REQUEST_TIMEOUT"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("--help does not list %s:\n%s", v, out.String())
		}
	}
	// The README's configuration table is where operators look: every
	// variable the server takes has its row there.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range regexp.MustCompile(`INVENTORY_[A-Z_]+`).FindAllString(out.String(), -1) {
		if !strings.Contains(string(readme), "| `"+v+"` |") {
			t.Errorf("README.md's configuration table has no row for %s", v)
		}
	}
}

// What the README's commands write in the checkout (the export's file and
// folder, the data folder of `go run`) is ignored by git: untracked files
// there would stamp every later build "+dirty".
func TestTheREADMEsOutputIsIgnoredByGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := exec.Command("git", "-C", "../..", "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	export := regexp.MustCompile(`go run \./cmd/inventoryd export .*--files (\S+) (\S+)`).FindStringSubmatch(string(readme))
	if export == nil {
		t.Fatal("the README has no export command with --files")
	}
	for _, path := range []string{export[2], export[1] + "/photos/x.jpg", "data/inventory.db"} {
		if out, err := exec.Command("git", "-C", "../..", "check-ignore", "--no-index", path).CombinedOutput(); err != nil {
			t.Errorf("git does not ignore %s, which the README's commands write: %v %s", path, err, out)
		}
	}
}

// docs/deployment.md covers running the service for real: TLS, the URL
// signing key as a secret, sizing an instance, and rolling a migration
// back; and what it quotes and names is what the code says: the refusal of
// a newer database, and settings --help lists.
func TestTheDeploymentGuideCoversOperation(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n## TLS\n", "\n## The URL signing key, a secret\n", "\n## Sizing an instance\n",
		"\n## Upgrading, and rolling back a migration\n", "sslmode=verify-full", "openssl rand -hex 32", "secretKeyRef",
		"GOMEMLIMIT", "DELETE FROM schema_migrations"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/deployment.md does not hold %q", strings.TrimSpace(want))
		}
	}
	migrations, err := os.ReadFile("../../internal/migrations/migrations.go")
	if err != nil {
		t.Fatal(err)
	}
	const refusal = "which this build does not know: it is older than the database"
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), refusal) || !strings.Contains(string(migrations), refusal) {
		t.Errorf("docs/deployment.md and internal/migrations disagree on the refusal of a newer database (%q)", refusal)
	}
	var help bytes.Buffer
	run(context.Background(), []string{"--help"}, func(string) string { return "" }, stdio{nil, &help, &help})
	for _, v := range regexp.MustCompile(`INVENTORY_[A-Z_]*[A-Z](_\*)?`).FindAllString(string(doc), -1) {
		if !strings.HasSuffix(v, "_*") && !strings.Contains(help.String(), v+" ") {
			t.Errorf("docs/deployment.md names %s, which --help does not list", v)
		}
	}
}

// --help's tables line up: each column starts at one place in every row,
// the header's, however long a name (healthcheck, INVENTORY_SUBSCRIPTIONS_PER_CONNECTION).
func TestHelpAlignsItsColumns(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"import", "--help"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, func(string) string { return "" }, stdio{nil, &out, &out}); err != errHelp {
			t.Fatalf("run %v: got %v, want errHelp", args, err)
		}
		tables := map[string][]string{} // title: rows
		title := ""
		for line := range strings.SplitSeq(out.String(), "\n") {
			switch {
			case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
				title = line
			case line == "":
				title = ""
			case title != "":
				tables[title] = append(tables[title], line)
			}
		}
		for title, rows := range tables {
			// Where the columns after the first start: at the header's
			// words (the settings), or two spaces after the longest first
			// cell, indented by two (commands, a command's own flags).
			var starts []int
			if strings.HasPrefix(title, "Settings") {
				for _, word := range []string{"environment", "default", "meaning"} {
					starts = append(starts, strings.Index(rows[0], word))
				}
			} else {
				width := 0
				for _, row := range rows {
					width = max(width, len(strings.Fields(row)[0]))
				}
				starts = []int{2 + width + 2}
			}
			for _, row := range rows {
				for i, at := range starts {
					empty := strings.HasPrefix(title, "Settings") && i == 1 // a setting without a default
					if len(row) <= at || row[at-1] != ' ' || row[at] == ' ' && !empty {
						t.Errorf("%v, %s: column %d does not start at %d in %q", args, title, i+2, at, row)
					}
				}
			}
		}
		if len(tables) < 2 {
			t.Errorf("%v: found %d tables in\n%s", args, len(tables), out.String())
		}
	}
}

func TestConfigFromEnvironmentAndFlags(t *testing.T) {
	env := map[string]string{"INVENTORY_ADDR": ":9000", "INVENTORY_DATA_DIR": "/srv/inv", "INVENTORY_LOG_LEVEL": "debug", "INVENTORY_REQUEST_TIMEOUT": "3s"}
	cfg, err := parseConfig([]string{"--addr", ":9001"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":9001" || cfg.DataDir != "/srv/inv" || cfg.LogLevel != slog.LevelDebug || cfg.DatabaseURL != filepath.Join("/srv/inv", "inventory.db") ||
		cfg.RequestTimeout != 3*time.Second {
		t.Errorf("got %+v", cfg)
	}
	if cfg, _ := parseConfig(nil, func(string) string { return "" }, io.Discard); cfg.RequestTimeout != server.DefaultRequestTimeout {
		t.Errorf("request timeout: got %s by default, want %s", cfg.RequestTimeout, server.DefaultRequestTimeout)
	}
	for _, bad := range []string{"soon", "0s", "-1s"} {
		if _, err := parseConfig([]string{"--request-timeout", bad}, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("request timeout %q: got no error", bad)
		}
	}
	cfg.DatabaseURL = "postgres://app:s3cret@db:5432/inv"
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("start", "config", cfg)
	if strings.Contains(logged.String(), "s3cret") {
		t.Errorf("the logged configuration shows the password: %s", logged.String())
	}
	if _, err := parseConfig([]string{"--log-level", "loud"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("log level loud: got no error")
	}
	if cfg, err := parseConfig(nil, func(k string) string { return map[string]string{"INVENTORY_TIME_ZONE": "Europe/Madrid"}[k] }, io.Discard); err != nil || cfg.TimeZone.String() != "Europe/Madrid" {
		t.Errorf("time zone Europe/Madrid: got %v, %v", cfg.TimeZone, err)
	}
	if cfg, _ := parseConfig(nil, func(string) string { return "" }, io.Discard); cfg.TimeZone.String() != "America/Bogota" {
		t.Errorf("time zone by default: got %v, want America/Bogota", cfg.TimeZone)
	}
	for _, bad := range []string{"Mars/Olympus", "Local", "-05:00"} {
		if _, err := parseConfig([]string{"--time-zone", bad}, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("time zone %q: got no error", bad)
		}
	}
}

// TestZeroConfigurationRunServesAndShutsDown is the README's run command with
// nothing set: it creates ./data, opens SQLite there, loads the demo data,
// serves, and returns cleanly when its context ends (SIGINT and SIGTERM end it
// in main), its last log line "stopped". Its start line gives durations as
// people write them ("10s"), not in nanoseconds. It always runs on SQLite:
// that is what a fresh machine gets.
func TestZeroConfigurationRunServesAndShutsDown(t *testing.T) {
	testdb.SQLiteOnly(t)
	t.Chdir(t.TempDir())
	prev := slog.Default() // run makes its logger the default
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &apitest.LogBuffer{}
	env := map[string]string{"INVENTORY_ADDR": "127.0.0.1:0"} // port 0: tests run side by side
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, stdio{nil, io.Discard, logs}) }()

	serving := regexp.MustCompile(`"msg":"serving","url":"(http://[^"]+)/"`)
	var base string
	for deadline := time.Now().Add(180 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("run returned before serving: %v\n%s", err, logs)
		default:
		}
		if m := serving.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no \"serving\" line within 180 s:\n%s", logs)
	}
	if _, err := os.Stat(filepath.Join("data", "inventory.db")); err != nil {
		t.Errorf("the default SQLite database: %v", err)
	}
	srv := &apitest.Server{URL: base}
	if res, body := srv.Get(t, "/readyz", nil); res.StatusCode != http.StatusOK {
		t.Errorf("/readyz: got %d %s, want 200", res.StatusCode, body)
	}
	var out struct{ Inventories struct{ TotalCount int } }
	srv.MustData(t, datagen.DemoCompanies[0].String(), `{ inventories { totalCount } }`, nil, &out)
	if out.Inventories.TotalCount != 60 {
		t.Errorf("demo company's inventories: got %d, want 60", out.Inventories.TotalCount)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after its context ended: got %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return within 15 s of its context ending")
	}
	if !strings.Contains(logs.String(), `"msg":"shutting down"`) {
		t.Errorf("no shutdown line in the log:\n%s", logs)
	}
	lines := logs.Take(t)
	if last := lines[len(lines)-1]; last["msg"] != "stopped" || last["level"] != "INFO" {
		t.Errorf("the last log line: %v, want INFO stopped", last)
	}
	started := slices.IndexFunc(lines, func(l map[string]any) bool { return l["msg"] == "starting" })
	if started < 0 {
		t.Errorf("no start line in the log")
	} else {
		config, _ := lines[started]["config"].(map[string]any)
		if config["request_timeout"] != "10s" || config["shutdown_delay"] != "2s" || config["live_heartbeat"] != "15s" {
			t.Errorf("the start line's durations: request_timeout %v, shutdown_delay %v, live_heartbeat %v; want 10s, 2s, 15s",
				config["request_timeout"], config["shutdown_delay"], config["live_heartbeat"])
		}
	}
}

func TestWaitReturnsWhenTheServerStopsByItself(t *testing.T) {
	m := launch(t)
	m.listener.Close() // what a failing listener looks like to Serve
	done := make(chan error, 1)
	go func() { done <- m.Wait(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the server stopped") {
			t.Errorf("Wait: got %v, want the reason the server stopped", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Wait did not return after the listener failed")
	}
}

// compose.yaml builds the image stamped as the Dockerfile takes it (each of
// its build arguments passed on from the environment), and says how to load
// records into its empty database, where the IDE would open on
// placeholders. (No CI check runs Docker Compose itself: see
// docs/decisions.md.)
func TestComposeStampsTheBuildAndSaysHowToLoadData(t *testing.T) {
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	compose, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	args := regexp.MustCompile(`(?m)^ARG (\w+)=`).FindAllStringSubmatch(string(dockerfile), -1)
	if len(args) < 2 {
		t.Fatalf("the Dockerfile's build arguments: %v, want VERSION and COMMIT", args)
	}
	if !regexp.MustCompile(`(?m)^    build:\n      context: \.\n      args:\n`).Match(compose) {
		t.Errorf("compose.yaml's service builds without build arguments")
	}
	for _, arg := range args {
		if !regexp.MustCompile(`(?m)^        ` + arg[1] + `: \$\{` + arg[1] + `:-\}$`).Match(compose) {
			t.Errorf("compose.yaml does not pass the build argument %s on from the environment", arg[1])
		}
	}
	for _, how := range []string{"COMMIT=$(git rev-parse HEAD)", "INVENTORY_DEMO=on docker compose up",
		"INVENTORY_DEMO: ${INVENTORY_DEMO:-off}", "docker compose exec inventory /inventoryd import /data/"} {
		if !strings.Contains(string(compose), how) {
			t.Errorf("compose.yaml does not say %q", how)
		}
	}
}

func TestGCIsTunedUnlessTheOperatorSetsIt(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	tuneGC(func(string) string { return "" }, 0)
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC: got %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != memoryLimit {
		t.Errorf("GOMEMLIMIT: got %d, want %d", got, memoryLimit)
	}
	// What the tree cache may keep is live for good: the limit grows by it.
	tuneGC(func(string) string { return "" }, 64<<20)
	if got := debug.SetMemoryLimit(-1); got != memoryLimit+64<<20 {
		t.Errorf("GOMEMLIMIT with a tree cache of 64 MiB: got %d, want %d", got, memoryLimit+64<<20)
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	env := map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}
	tuneGC(func(k string) string { return env[k] }, 64<<20)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: got %d, want it left alone (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: got %d, want it left alone", got)
	}
}

// --version says which build this is; /metrics says it too, as
// inventory_build_info, and the start's log line names it.
func TestTheBuildSaysWhatItIs(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, func(string) string { return "" }, stdio{nil, &out, io.Discard}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^inventoryd \S+ \(commit \S+, go1\.\d+`).MatchString(out.String()) {
		t.Errorf("--version: %q", out.String())
	}
	res := httptest.NewRecorder()
	metrics.New().Handler().ServeHTTP(res, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !regexp.MustCompile(`inventory_build_info\{commit="[^"]+",go_version="go1\.\d+[^"]*",version="[^"]+"\} 1`).MatchString(res.Body.String()) {
		t.Errorf("/metrics has no inventory_build_info:\n%.500s", res.Body.String())
	}
}

// Demo data never goes into a real database unasked: INVENTORY_DEMO is auto
// by default (on for SQLite, off for PostgreSQL), and off leaves an empty
// SQLite database empty, with an IDE that names no company.
func TestDemoDataOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		demo, url string
		want      bool
	}{
		{"auto", "data/inventory.db", true}, {"auto", "postgres://db/inventory", false}, {"auto", "POSTGRESQL://db/x", false},
		{"on", "postgres://db/inventory", true}, {"off", "data/inventory.db", false},
	} {
		cfg, err := parseConfig(nil, func(k string) string {
			return map[string]string{"INVENTORY_DEMO": tc.demo, "INVENTORY_DATABASE_URL": tc.url}[k]
		}, io.Discard)
		if err != nil || cfg.loadsDemo() != tc.want {
			t.Errorf("demo %s on %s: loads %v (%v), want %v", tc.demo, tc.url, cfg.loadsDemo(), err, tc.want)
		}
	}
	if _, err := parseConfig([]string{"--demo", "yes"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("demo yes: got no error")
	}
	if cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard); err != nil || cfg.Writes != "on" {
		t.Errorf("writes by default: %q, %v; want on", cfg.Writes, err)
	}
	if _, err := parseConfig([]string{"--writes", "maybe"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("writes maybe: got no error")
	}

	t.Chdir(t.TempDir())
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &apitest.LogBuffer{}
	env := map[string]string{"INVENTORY_ADDR": "127.0.0.1:0", "INVENTORY_DEMO": "off"}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, stdio{nil, io.Discard, logs}) }()
	serving := regexp.MustCompile(`"msg":"serving","url":"(http://[^"]+)/"`)
	var base string
	for deadline := time.Now().Add(60 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := serving.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no \"serving\" line within 60 s:\n%s", logs)
	}
	srv := &apitest.Server{URL: base}
	var out struct{ Inventories struct{ TotalCount int } }
	srv.MustData(t, datagen.DemoCompanies[0].String(), `{ inventories { totalCount } }`, nil, &out)
	if out.Inventories.TotalCount != 0 || strings.Contains(logs.String(), "loaded demo data") {
		t.Errorf("INVENTORY_DEMO=off: the demo company has %d inventories, want none loaded", out.Inventories.TotalCount)
	}
	if _, page := srv.Get(t, "/", nil); strings.Contains(string(page), datagen.DemoCompanies[0].String()) || !strings.Contains(string(page), "your company") {
		t.Errorf("the IDE of a database without the demo names the demo company:\n%.400s", page)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

// TestTheAccessLogByDefaultSamplesSuccessesAndKeepsFailures: with nothing
// set, the access log no longer writes a line for every request (47 MB every
// 10 minutes of moderate load): of 150 successful requests it logs 2, each
// standing for 100, and it logs every failed one.
func TestTheAccessLogByDefaultSamplesSuccessesAndKeepsFailures(t *testing.T) {
	logs := &apitest.LogBuffer{}
	m := launchLogged(t, logs.Logger(slog.LevelInfo), nil)
	closeAfter(t, m)
	if m.Config.AccessLog != "sampled" || m.Config.AccessLogSample != server.DefaultAccessLogSample {
		t.Fatalf("access log by default: %q, one in %d; want sampled, one in %d", m.Config.AccessLog, m.Config.AccessLogSample, server.DefaultAccessLogSample)
	}
	for range 150 {
		if res, _ := get(t, m, "/healthz"); res.StatusCode != http.StatusOK {
			t.Fatal(res.Status)
		}
	}
	failed := []string{"/api/v1/inventories", "/nowhere", "/inventory/detail/not-a-uuid"}
	for _, path := range failed {
		if res, _ := get(t, m, path); res.StatusCode < 400 {
			t.Fatalf("%s: %s, want a failure", path, res.Status)
		}
	}
	var successes, failures int
	for _, line := range logs.Take(t) {
		if line["msg"] != "http request" {
			continue
		}
		if status, _ := line["status"].(float64); status >= 400 {
			failures++
		} else if line["sample"] == float64(100) {
			successes++
		} else {
			t.Errorf("a success logged unsampled: %v", line)
		}
	}
	if successes != 2 || failures != len(failed) {
		t.Errorf("access log lines: %d for 150 successes, %d for %d failures; want 2 (each standing for 100) and every failure",
			successes, failures, len(failed))
	}
}
