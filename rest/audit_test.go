package rest_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// auditLines are the audit lines of lookups without a company among lines.
func auditLines(lines []map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == "tenancy: unrestricted context" {
			out = append(out, l)
		}
	}
	return out
}

// captureDefaultLog points the default logger, where tenant writes its audit
// lines, at a buffer for the rest of the test.
func captureDefaultLog(t *testing.T, level slog.Level) *apitest.LogBuffer {
	t.Helper()
	return captureDefaultAuditLog(t, level, "info")
}

// captureDefaultAuditLog is captureDefaultLog with the audit lines as mode
// says (INVENTORY_AUDIT_LOG, a setting of the logger: tenant.AuditLog).
func captureDefaultAuditLog(t *testing.T, level slog.Level, mode string) *apitest.LogBuffer {
	t.Helper()
	logs := &apitest.LogBuffer{}
	previous := slog.Default()
	slog.SetDefault(slog.New(tenant.AuditLog(logs.Logger(level).Handler(), mode)))
	t.Cleanup(func() { slog.SetDefault(previous) })
	return logs
}

// A lookup without a company (A1, A2, A3, A5) is audited with the record
// it read and who asked: the connection's address, and X-Forwarded-For
// (under that name: any client can write it) when sent.
func TestLookupsWithoutACompanyAreAuditedWithRecordAndCaller(t *testing.T) {
	a := demo(t)
	inv := signedInventory(t, a)
	var a1 a1Named
	a.getJSON(t, "/inventory/detail/"+inv.InventoryID, &a1)
	item := a1.EnvironmentDiagnostics[0].ItemDiagnostic[0].ItemDiagnosticID
	logs := captureDefaultLog(t, slog.LevelInfo) // after loading: the loader is audited too

	// The first A2 of a signed PDF never stored has it made in the
	// background, which looks for a PDF kept meanwhile, reads the record
	// and records the PDF: audited with its record even though the request
	// named a company.
	a.Get(t, "/inventory/download-pdf/"+inv.InventoryID+query("x-company-id", companyA), nil)
	lines := auditLines(logs.Take(t))
	if len(lines) != 3 {
		t.Errorf("the first A2 of a PDF never stored: audit lines %v, want the rendering's look-up, read and write", lines)
	}
	for _, l := range lines {
		if l["record"] != inv.InventoryID || !strings.HasPrefix(l["reason"].(string), "signed PDF: ") {
			t.Errorf("the first A2 of a PDF never stored: audit line %v, want one naming the rendering and its record", l)
		}
	}

	for _, tt := range []struct{ endpoint, path, record string }{
		{"A1", "/inventory/detail/", inv.InventoryID},
		{"A2", "/inventory/download-pdf/", inv.InventoryID},
		{"A3", "/inventory/download-photos/itemDiagnostic/", item},
		{"A5", "/property/get_property_uuid/", inv.Property.PropertyID},
	} {
		a.Get(t, tt.path+tt.record, http.Header{"X-Forwarded-For": {"203.0.113.7, 10.0.0.2"}})
		a.Get(t, tt.path+tt.record, nil)
		lines := auditLines(logs.Take(t))
		if len(lines) != 2 {
			t.Fatalf("%s: %d audit lines for 2 lookups: %v", tt.endpoint, len(lines), lines)
		}
		for i, l := range lines {
			addr, _ := l["remote_addr"].(string)
			if l["level"] != "INFO" || l["record"] != tt.record || !strings.HasPrefix(addr, "127.0.0.1:") ||
				!strings.HasPrefix(l["reason"].(string), tt.endpoint+": ") {
				t.Errorf("%s: audit line %v, want at INFO the endpoint, the record %s and the caller's address", tt.endpoint, l, tt.record)
			}
			if forwarded, sent := l["x_forwarded_for"]; (i == 0) != sent || sent && forwarded != "203.0.113.7, 10.0.0.2" {
				t.Errorf("%s: audit line %v: want X-Forwarded-For as sent, and only when sent", tt.endpoint, l)
			}
		}

		// With a company there is nothing to audit, nor for a request refused.
		a.Get(t, tt.path+tt.record+query("x-company-id", companyA), nil)
		a.Get(t, tt.path+"not-a-uuid", nil)
		if lines := auditLines(logs.Take(t)); len(lines) != 0 {
			t.Errorf("%s: audited a lookup with a company or a refused one: %v", tt.endpoint, lines)
		}
	}

	// "debug" writes them at debug level: gone at the default info level,
	// there at debug.
	logs = captureDefaultAuditLog(t, slog.LevelInfo, "debug")
	a.Get(t, "/inventory/detail/"+inv.InventoryID, nil)
	if lines := auditLines(logs.Take(t)); len(lines) != 0 {
		t.Errorf("audit log debug, log level info: got %v, want no line", lines)
	}
	logs = captureDefaultAuditLog(t, slog.LevelDebug, "debug")
	a.Get(t, "/inventory/detail/"+inv.InventoryID, nil)
	if lines := auditLines(logs.Take(t)); len(lines) != 1 || lines[0]["level"] != "DEBUG" || lines[0]["record"] != inv.InventoryID {
		t.Errorf("audit log debug, log level debug: got %v, want one DEBUG line naming the record", lines)
	}
	// "off" silences them at any level.
	logs = captureDefaultAuditLog(t, slog.LevelDebug, "off")
	a.Get(t, "/inventory/detail/"+inv.InventoryID, nil)
	if lines := auditLines(logs.Take(t)); len(lines) != 0 {
		t.Errorf("audit log off: got %v, want no line", lines)
	}
}
