package main

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// TestSettingsReachTheServerAsValuesOfItsConfig: INVENTORY_WRITES and
// INVENTORY_TIME_ZONE are values of the Config a Main is started with, not
// package-level settings made before it: a Main started by a test honours
// them, and another Main in the same process keeps its own.
func TestSettingsReachTheServerAsValuesOfItsConfig(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	if err != nil {
		t.Fatal(err)
	}
	readOnly := launchWith(t, func(c *Config) { c.Writes = "off"; c.TimeZone = madrid })
	closeAfter(t, readOnly)
	writable := launch(t)
	closeAfter(t, writable)
	mutation := `{"query":"mutation { removeItemPhoto(photoId: \"` + writableItem(t, readOnly) + `\") { photoId } }"}`
	for name, m := range map[string]*Main{"writes off": readOnly, "writes on": writable} {
		req, _ := http.NewRequest(http.MethodPost, m.URL()+"/graphql", strings.NewReader(mutation))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(tenant.Header, "11111111-1111-4111-8111-111111111111")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(res.Body)
		res.Body.Close()
		if off := strings.Contains(body.String(), "INVENTORY_WRITES=off"); off != (name == "writes off") {
			t.Errorf("%s: a mutation answered %s", name, body.String())
		}
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: .ci/run installs it")
	}
	ctx := tenant.Unrestricted(context.Background(), "test: a signed inventory")
	inv, err := readOnly.store.Client.Inventory.Query().Where(inventory.IsSigned(true)).Order(ent.Asc(inventory.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pdf string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		res, body := get(t, readOnly, "/inventory/download-pdf/"+inv.ID.String())
		if res.StatusCode == http.StatusOK {
			pdf = body
			break
		}
	}
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = strings.NewReader(pdf)
	text, err := cmd.Output()
	if err != nil || !strings.Contains(string(text), "Europe/Madrid") {
		t.Errorf("the signed PDF of a server set to Europe/Madrid: %v\n%.600s", err, text)
	}
}
