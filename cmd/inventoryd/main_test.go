package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// start runs the real program on a free port with a fresh database.
func start(t *testing.T) *Main {
	t.Helper()
	dir := t.TempDir()
	cfg, err := parseConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = testdb.URL(t)
	m := &Main{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

func get(t *testing.T, m *Main, path string) (*http.Response, string) {
	t.Helper()
	res, body := (&apitest.Server{URL: m.URL()}).Get(t, path, nil)
	return res, string(body)
}

func TestServerStartsWithDemoDataAndServesTheTree(t *testing.T) {
	m := start(t)
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
	res2, body := get(t, m, "/graphql?query=%7B__typename%7D")
	if res2.StatusCode != http.StatusOK || !strings.Contains(body, `"Query"`) {
		t.Errorf("GET /graphql: got %d %s", res2.StatusCode, body)
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
	for _, v := range []string{"INVENTORY_ADDR", "INVENTORY_DATABASE_URL", "INVENTORY_DATA_DIR", "INVENTORY_LOG_LEVEL"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("--help does not list %s:\n%s", v, out.String())
		}
	}
}

func TestConfigFromEnvironmentAndFlags(t *testing.T) {
	env := map[string]string{"INVENTORY_ADDR": ":9000", "INVENTORY_DATA_DIR": "/srv/inv", "INVENTORY_LOG_LEVEL": "debug"}
	cfg, err := parseConfig([]string{"--addr", ":9001"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":9001" || cfg.DataDir != "/srv/inv" || cfg.LogLevel != slog.LevelDebug || cfg.DatabaseURL != filepath.Join("/srv/inv", "inventory.db") {
		t.Errorf("got %+v", cfg)
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
}
