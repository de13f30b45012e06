package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
)

// The README's walk-through: a server in apikey mode, a key made with the
// command (its last line of output), used, listed and revoked. The list
// reads in the order of a key's life: CREATED, then LAST USED ("never"
// before its first use, and never before its creation), then REVOKED.
func TestAPIKeyCommandsAndTheServerThatTakesThem(t *testing.T) {
	var url string
	m := launchWith(t, func(c *Config) { c.Auth = auth.APIKey; url = c.DatabaseURL })
	t.Cleanup(func() { m.Close() })
	data := t.TempDir()
	company := datagen.DemoCompanies[0].String()
	out, _, err := runCommand(t, url, data, "", "apikey", "create", "--company", company, "--name", "reports-app")
	if err != nil {
		t.Fatalf("apikey create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, "ik_") || strings.Contains(key, " ") {
		t.Fatalf("apikey create: the last line %q is not the key", key)
	}
	listed := regexp.MustCompile(`(?m)^reports-app\s+\S+\s+\S+\s+read\s+(\S+)\s+(\S+)\s+(\S+)$`)
	out, _, err = runCommand(t, url, data, "", "apikey", "list")
	if row := listed.FindStringSubmatch(out); err != nil || row == nil || row[2] != "never" || row[3] != "-" ||
		strings.Index(out, "CREATED") > strings.Index(out, "LAST USED") {
		t.Errorf("apikey list of a key never used: %q, %v; want its CREATED, then LAST USED never, then REVOKED -", out, err)
	}
	srv := &apitest.Server{URL: m.URL()}
	path := "/api/v1/inventories"
	if res, body := srv.Get(t, path, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d %s, want 401", res.StatusCode, body)
	}
	if res, body := srv.Get(t, path, http.Header{"Authorization": {"Bearer " + key}}); res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"inventoryId"`) {
		t.Errorf("the key: %d %.200s, want 200 with the company's inventories", res.StatusCode, body)
	}
	// Its use is noted after the request, in the background.
	var row []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out, _, err = runCommand(t, url, data, "", "apikey", "list"); err != nil {
			t.Fatal(err)
		}
		if row = listed.FindStringSubmatch(out); row != nil && row[2] != "never" {
			break
		}
	}
	if row == nil {
		t.Fatalf("apikey list: %q, no row of reports-app", out)
	}
	created, err1 := time.Parse(time.RFC3339, row[1])
	used, err2 := time.Parse(time.RFC3339, row[2])
	if err1 != nil || err2 != nil || used.Before(created) {
		t.Errorf("apikey list of a key just used: CREATED %s, LAST USED %s; want both times, the use not before the creation", row[1], row[2])
	}
	// A key reads only unless made with --scope write.
	if _, _, err := runCommand(t, url, data, "", "apikey", "create", "--company", company, "--name", "field-app", "--scope", "write"); err != nil {
		t.Fatalf("apikey create --scope write: %v", err)
	}
	if _, _, err := runCommand(t, url, data, "", "apikey", "create", "--company", company, "--name", "x", "--scope", "admin"); err == nil {
		t.Error("apikey create --scope admin: want an error")
	}
	out, _, err = runCommand(t, url, data, "", "apikey", "list", "--company", company)
	if err != nil || !regexp.MustCompile(`reports-app\s+\S+\s+\S+\s+read\s`).MatchString(out) ||
		!regexp.MustCompile(`field-app\s+\S+\s+\S+\s+write\s`).MatchString(out) || strings.Contains(out, key) {
		t.Errorf("apikey list: %q, %v: want each key's name and scope and never the key", out, err)
	}
	if out, _, err := runCommand(t, url, data, "", "apikey", "revoke", "reports-app"); err != nil || !strings.Contains(out, "revoked") {
		t.Errorf("apikey revoke: %q, %v", out, err)
	}
	if res, body := srv.Get(t, path, http.Header{"Authorization": {"Bearer " + key}}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked key: %d %s, want 401", res.StatusCode, body)
	}
	for _, args := range [][]string{{"apikey"}, {"apikey", "create", "--name", "x"}, {"apikey", "create", "--company", "nope", "--name", "x"}, {"apikey", "revoke"}} {
		if _, _, err := runCommand(t, url, data, "", args...); err == nil {
			t.Errorf("%v: want a usage error", args)
		}
	}
}

// Header mode refuses to serve beyond this machine unless a gateway in
// front sets X-Company-Id (INVENTORY_BEHIND_GATEWAY=on): anyone who reached
// it could name any company. On loopback, and in the credential modes, it
// serves; the refusal names the setting. The start's line names the mode.
func TestHeaderModeBeyondLoopbackNeedsAGateway(t *testing.T) {
	for _, tt := range []struct {
		addr, gateway string
		mode          auth.Mode
		refused       bool
	}{
		{"127.0.0.1:0", "off", auth.Header, false},
		{"0.0.0.0:0", "off", auth.Header, true},
		{":0", "off", auth.Header, true},
		{"0.0.0.0:0", "on", auth.Header, false},
		{"0.0.0.0:0", "off", auth.APIKey, false},
	} {
		listener, err := net.Listen("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		var logs apitest.LogBuffer
		m := &Main{Config: Config{Auth: tt.mode, BehindGateway: tt.gateway}, Log: logs.Logger(0), listener: listener}
		err = m.refuseAnOpenHeaderMode()
		m.logAuthentication()
		listener.Close()
		if refused := err != nil; refused != tt.refused || refused && !strings.Contains(err.Error(), "INVENTORY_BEHIND_GATEWAY=on") {
			t.Errorf("%s on %s, behind a gateway %s: got %v, want refused %v, naming INVENTORY_BEHIND_GATEWAY", tt.mode, tt.addr, tt.gateway, err, tt.refused)
		}
		if lines := logs.String(); !strings.Contains(lines, `"msg":"authentication","mode":"`+string(tt.mode)+`"`) {
			t.Errorf("%s on %s: no line naming the mode:\n%.1500s", tt.mode, tt.addr, lines)
		}
	}

	// The program itself, as the container starts it: refused before it
	// opens a database, and served with the setting.
	dir := t.TempDir()
	env := map[string]string{"INVENTORY_ADDR": "0.0.0.0:0", "INVENTORY_DATA_DIR": dir, "INVENTORY_DEMO": "off", "INVENTORY_SHUTDOWN_DELAY": "0s"}
	getenv := func(k string) string { return env[k] }
	var out, errOut strings.Builder
	err := run(t.Context(), nil, getenv, stdio{nil, &out, &errOut})
	if err == nil || !strings.Contains(err.Error(), "INVENTORY_BEHIND_GATEWAY") {
		t.Fatalf("serving header mode on 0.0.0.0: %v, want a refusal naming INVENTORY_BEHIND_GATEWAY", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "inventory.db")); statErr == nil {
		t.Errorf("the refused start made a database")
	}
}

// The container's health check: ready while /readyz says so, not when it
// says otherwise or nothing answers.
func TestHealthcheckCommandAsksTheServerOnItsAddress(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	check := func() error {
		env := map[string]string{"INVENTORY_ADDR": "0.0.0.0:" + port}
		var out, errOut strings.Builder
		return run(t.Context(), []string{"healthcheck"}, func(k string) string { return env[k] }, stdio{nil, &out, &errOut})
	}
	if err := check(); err != nil {
		t.Errorf("healthcheck of a ready server: %v", err)
	}
	ready.Store(false)
	if err := check(); err == nil {
		t.Errorf("healthcheck of a server that is not ready: want an error")
	}
	srv.Close()
	if err := check(); err == nil {
		t.Errorf("healthcheck with nothing listening: want an error")
	}
}

// On PostgreSQL, which several instances may share, the server says what it
// keeps of its own: a file-kept URL signing key, a blob folder of its own
// (the default, or one inside its data folder, or memory). A shared folder
// configured as docs/deployment.md recommends (file:///srv/blobs, which
// every instance mounts) is no folder of its own.
func TestTheServerSaysWhatSeveralInstancesMustShare(t *testing.T) {
	const pg = "postgres://db/inventory"
	for _, tt := range []struct {
		cfg      Config
		key, dir bool
	}{
		{Config{DatabaseURL: "data/inventory.db"}, false, false},
		{Config{DatabaseURL: pg, DataDir: "/var/lib/inventory"}, true, true},
		{Config{DatabaseURL: pg, SigningKey: "k", BlobURL: "s3://evidence"}, false, false},
		{Config{DatabaseURL: pg, DataDir: "/var/lib/inventory", SigningKey: "k", BlobURL: "file:///srv/blobs"}, false, false},
		{Config{DatabaseURL: pg, DataDir: "data", SigningKey: "k", BlobURL: "file:///srv/blobs"}, false, false},
		{Config{DatabaseURL: pg, DataDir: "/var/lib/inventory", SigningKey: "k", BlobURL: "file:///var/lib/inventory/blobs"}, false, true},
		{Config{DatabaseURL: pg, DataDir: "/var/lib/inventory", SigningKey: "k", BlobURL: "file:///var/lib/inventory"}, false, true},
		{Config{DatabaseURL: pg, DataDir: "/var/lib/inventory", SigningKey: "k", BlobURL: "file:///var/lib/inventory-blobs"}, false, false},
		{Config{DatabaseURL: pg, DataDir: "/var/lib/inventory", SigningKey: "k", BlobURL: "mem://"}, false, true},
	} {
		var logs apitest.LogBuffer
		(&Main{Config: tt.cfg, Log: logs.Logger(0)}).warnOfInstanceState()
		lines := logs.String()
		if got := strings.Contains(lines, "INVENTORY_URL_SIGNING_KEY"); got != tt.key {
			t.Errorf("%+v: warned of the key %v, want %v", tt.cfg, got, tt.key)
		}
		if got := strings.Contains(lines, "folder of this instance"); got != tt.dir {
			t.Errorf("%+v: warned of the folder %v, want %v", tt.cfg, got, tt.dir)
		}
	}
}
