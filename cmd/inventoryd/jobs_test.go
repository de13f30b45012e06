package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// signAll signs an unsigned demo inventory of the first demo company by
// each party it requires, through the API, and returns its id.
func signAll(t *testing.T, m *Main) uuid.UUID {
	t.Helper()
	ctx := tenant.Unrestricted(context.Background(), "test")
	inv, err := m.store.Client.Inventory.Query().Where(inventory.IsSigned(false), inventory.AgentSignatureDateIsNil(),
		inventory.OwnerSignatureDateIsNil(), inventory.TenantSignatureDateIsNil(),
		inventory.CompanyID(datagen.DemoCompanies[0])).Order(ent.Asc(inventory.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := &apitest.Server{URL: m.URL()}
	for _, party := range records.RequiredSignatures(inv) {
		res := srv.GraphQL(t, datagen.DemoCompanies[0].String(),
			`mutation($input: SignInventoryInput!) { signInventory(input: $input) { inventory { id isSigned } } }`,
			map[string]any{"input": map[string]any{"inventoryId": inv.ID, "party": strings.ToUpper(string(party)), "signerName": "Ana Gómez"}})
		if len(res.Errors) > 0 {
			t.Fatalf("signing as %s: %+v", party, res.Errors)
		}
	}
	return inv.ID
}

// pdfKept waits up to within for inventory id's PDF digest to be recorded
// (its file is stored before).
func pdfKept(t *testing.T, m *Main, id uuid.UUID, within time.Duration) *string {
	t.Helper()
	ctx := tenant.Unrestricted(context.Background(), "test")
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		inv, err := m.store.Client.Inventory.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if inv.PdfSha256 != nil || time.Now().After(deadline) {
			return inv.PdfSha256
		}
	}
}

// signedPDFJobs are the signed_pdf jobs of inventory id.
func signedPDFJobs(t *testing.T, m *Main, id uuid.UUID) []string {
	t.Helper()
	list, err := m.jobs.Client().JobList(context.Background(), river.NewJobListParams().Kinds(jobs.SignedPDFArgs{}.Kind()).First(100))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, j := range list.Jobs {
		if strings.Contains(string(j.EncodedArgs), id.String()) {
			states = append(states, string(j.State))
		}
	}
	return states
}

// The last signature commits with its PDF's job; the worker finds the PDF
// kept (by the rendering the signature waited for) or keeps it, and the
// job completes; /metrics counts it.
func TestTheLastSignatureCommitsThePDFsJob(t *testing.T) {
	m := start(t)
	id := signAll(t, m)
	if pdfKept(t, m, id, 10*time.Second) == nil {
		t.Fatal("the signed PDF was not kept within 10 s")
	}
	var states []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if states = signedPDFJobs(t, m, id); len(states) == 1 && states[0] == "completed" {
			break
		}
	}
	if len(states) != 1 || states[0] != "completed" {
		t.Fatalf("the signed_pdf jobs of the inventory: %v; want one, completed", states)
	}
	_, metrics := get(t, m, "/metrics")
	if !regexp.MustCompile(`(?m)^inventory_durable_jobs\{kind="signed_pdf",state="completed"\} 1$`).MatchString(metrics) ||
		!regexp.MustCompile(`(?m)^inventory_durable_jobs_oldest_available_seconds 0$`).MatchString(metrics) {
		t.Errorf("/metrics: want one completed signed_pdf job and none waiting; got\n%s", grepLines(metrics, "inventory_durable_jobs"))
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, prefix) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}

// Environment of the killed process of TestAServerKilledAfterTheSignatureMakesThePDFOnRestart.
const (
	killedURLEnv = "INVENTORYD_TEST_KILLED_DB"
	killedDirEnv = "INVENTORYD_TEST_KILLED_DIR"
)

// The acceptance of issue 37's signed PDF: a server killed (SIGKILL) after
// the last signature committed and before its PDF was kept leaves the
// PDF's job; the server started again on the database makes the PDF,
// nobody downloading it. The killed process works no jobs (INVENTORY_JOBS
// off) and cannot keep a PDF (its PDF folder is a file), so that nothing
// but the job can make it after the restart.
func TestAServerKilledAfterTheSignatureMakesThePDFOnRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and kills it")
	}
	url, dir := testdb.DemoRecords.URL(t), t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestKilledServerProcess$", "-test.v")
	child.Env = append(os.Environ(), killedURLEnv+"="+url, killedDirEnv+"="+dir)
	var stderr strings.Builder
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	var id uuid.UUID
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if text, ok := strings.CutPrefix(lines.Text(), "SIGNED "); ok {
			id = uuid.MustParse(text)
			break
		}
	}
	if id == uuid.Nil {
		t.Fatalf("the server process signed nothing: %s", stderr.String())
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL: no shutdown of any kind
		t.Fatal(err)
	}
	_ = child.Wait()
	go io.Copy(io.Discard, out)

	// The PDF folder back, as a store fixed after the crash.
	pdfs := filepath.Join(dir, "blobs", "pdf")
	if err := os.Remove(pdfs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(pdfs, 0o755); err != nil {
		t.Fatal(err)
	}
	m := launchOn(t, url, slog.New(slog.DiscardHandler), func(c *Config) { c.DataDir = dir; c.BlobURL = "" })
	closeAfter(t, m)
	if states := signedPDFJobs(t, m, id); len(states) != 1 {
		t.Fatalf("the signed_pdf jobs after the restart: %v; want the one the signature committed", states)
	}
	sum := pdfKept(t, m, id, 20*time.Second)
	if sum == nil {
		t.Fatalf("the signed PDF was not made within 20 s of the restart (jobs %v)", signedPDFJobs(t, m, id))
	}
	data, err := os.ReadFile(filepath.Join(pdfs, id.String()+".pdf"))
	if err != nil || !strings.HasPrefix(string(data), "%PDF-") {
		entries, _ := os.ReadDir(pdfs)
		t.Fatalf("the kept PDF's file: %v (folder: %v)", err, entries)
	}
	t.Logf("the PDF of %s was made by the restarted server's job: sha256 %s", id, *sum)
}

// TestKilledServerProcess is the server process the test above kills:
// it serves with jobs off and a PDF folder that cannot be written, signs
// an inventory through its own API, says which, and waits to be killed.
func TestKilledServerProcess(t *testing.T) {
	url, dir := os.Getenv(killedURLEnv), os.Getenv(killedDirEnv)
	if url == "" {
		t.Skip("run by TestAServerKilledAfterTheSignatureMakesThePDFOnRestart")
	}
	m := launchOn(t, url, slog.New(slog.DiscardHandler), func(c *Config) { c.DataDir = dir; c.BlobURL = ""; c.Jobs = "off" })
	pdfs := filepath.Join(dir, "blobs", "pdf")
	if err := os.RemoveAll(pdfs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdfs, []byte("a file where the folder was"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := signAll(t, m)
	fmt.Println("SIGNED " + id.String())
	time.Sleep(time.Hour)
}

// A backlog of jobs no instance works (this one has jobs off) shows in
// /metrics, its oldest waiting, and is no reason to leave the rotation:
// /readyz stays 200.
func TestABacklogShowsInMetricsNotInReadiness(t *testing.T) {
	m := launchWith(t, func(c *Config) { c.Jobs = "off"; c.WebhooksAllowPrivate = "on" })
	closeAfter(t, m)
	srv := &apitest.Server{URL: m.URL()}
	srv.MustData(t, datagen.DemoCompanies[0].String(),
		`mutation { createWebhookEndpoint(input: {url: "http://127.0.0.1:9/hooks", events: [AGENT_SIGNED, OWNER_SIGNED, TENANT_SIGNED, FULLY_SIGNED]}) { secret } }`,
		nil, &struct{}{})
	signAll(t, m)
	time.Sleep(1100 * time.Millisecond) // the oldest job's wait is counted in whole seconds
	_, metrics := get(t, m, "/metrics")
	if !regexp.MustCompile(`(?m)^inventory_durable_jobs\{kind="webhook_delivery",state="available"\} [1-9][0-9]*$`).MatchString(metrics) ||
		!regexp.MustCompile(`(?m)^inventory_durable_jobs\{kind="signed_pdf",state="available"\} 1$`).MatchString(metrics) ||
		!regexp.MustCompile(`(?m)^inventory_durable_jobs_oldest_available_seconds [1-9]`).MatchString(metrics) {
		t.Errorf("/metrics with a backlog: want webhook deliveries and the signed PDF available, the oldest waiting; got\n%s",
			grepLines(metrics, "inventory_durable_jobs"))
	}
	if res, body := get(t, m, "/readyz"); res.StatusCode != 200 {
		t.Errorf("/readyz with a backlog: %d %s; want 200", res.StatusCode, body)
	}
}
