package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// insertOnly is the client of a command that writes and works no jobs.
func insertOnly(t *testing.T, st *store.Store) *jobs.Jobs {
	t.Helper()
	j, err := jobs.New(context.Background(), st, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := j.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return j
}

// pdfJobs are the signed_pdf jobs of inventory id in the database.
func pdfJobs(t *testing.T, j *jobs.Jobs, id uuid.UUID) int {
	t.Helper()
	list, err := j.Client().JobList(context.Background(), river.NewJobListParams().Kinds(jobs.SignedPDFArgs{}.Kind()).First(1000))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, job := range list.Jobs {
		if strings.Contains(string(job.EncodedArgs), id.String()) {
			n++
		}
	}
	return n
}

// A job is inserted in the caller's transaction: it exists once that
// commits, never when it rolls back; inserted again while pending, it is
// the same job.
func TestAJobCommitsOrRollsBackWithItsTransaction(t *testing.T) {
	st := testdb.Open(t)
	j := insertOnly(t, st)
	ctx := context.Background()
	committed, rolledBack := uuid.New(), uuid.New()
	for range 2 {
		if err := records.InTx(ctx, st.Client, func(tx *ent.Tx) error {
			return j.SignedPDF(ctx, tx, uuid.New(), committed)
		}); err != nil {
			t.Fatal(err)
		}
	}
	failed := errors.New("the write failed after its job")
	if err := records.InTx(ctx, st.Client, func(tx *ent.Tx) error {
		if err := j.SignedPDF(ctx, tx, uuid.New(), rolledBack); err != nil {
			return err
		}
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("the rolled-back transaction: %v", err)
	}
	if n := pdfJobs(t, j, committed); n != 1 {
		t.Errorf("jobs of the committed transactions (twice, unique per inventory): %d; want 1", n)
	}
	if n := pdfJobs(t, j, rolledBack); n != 0 {
		t.Errorf("jobs of the rolled-back transaction: %d; want none", n)
	}
}

// failAfterInsert inserts the PDF's job, then fails the signature's
// transaction, as any later statement of it could.
type failAfterInsert struct{ *jobs.Jobs }

var errAfterInsert = errors.New("failing after the job's insert")

func (f failAfterInsert) SignedPDF(ctx context.Context, tx *ent.Tx, company, id uuid.UUID) error {
	if err := f.Jobs.SignedPDF(ctx, tx, company, id); err != nil {
		return err
	}
	return errAfterInsert
}

// The last signature inserts the PDF's job in its own transaction: when
// that transaction fails, neither the signature nor the job is there; when
// it commits, both are.
func TestTheLastSignatureCommitsItsPDFsJobOrNeither(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	j := insertOnly(t, st)
	company := datagen.DemoCompanies[0]
	ctx := tenant.WithCompany(context.Background(), company)
	inv, err := st.Client.Inventory.Query().Where(inventory.IsSigned(false), inventory.AgentSignatureDateIsNil(),
		inventory.OwnerSignatureDateIsNil(), inventory.TenantSignatureDateIsNil()).Order(ent.Asc(inventory.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	parties := records.RequiredSignatures(inv)
	sign := func(svc *records.Service, party records.Party) error {
		_, err := svc.Sign(ctx, records.Signing{InventoryID: inv.ID, Party: party, SignerName: "Ana Gómez"})
		return err
	}
	failing := records.NewService(st.Client, st, log, nil, nil, false).WithJobs(failAfterInsert{j})
	working := records.NewService(st.Client, st, log, nil, nil, false).WithJobs(j)
	for _, p := range parties[:len(parties)-1] {
		if err := sign(working, p); err != nil {
			t.Fatal(err)
		}
	}
	if n := pdfJobs(t, j, inv.ID); n != 0 {
		t.Fatalf("jobs before the last signature: %d; want none", n)
	}
	last := parties[len(parties)-1]
	if err := sign(failing, last); !errors.Is(err, errAfterInsert) {
		t.Fatalf("the failing last signature: %v", err)
	}
	if again, err := st.Client.Inventory.Get(ctx, inv.ID); err != nil || again.IsSigned {
		t.Fatalf("after the failed last signature: signed %v, %v; want unsigned", again.IsSigned, err)
	}
	if n := pdfJobs(t, j, inv.ID); n != 0 {
		t.Fatalf("jobs of the failed last signature: %d; want none", n)
	}
	if err := sign(working, last); err != nil {
		t.Fatal(err)
	}
	if n := pdfJobs(t, j, inv.ID); n != 1 {
		t.Fatalf("jobs of the last signature: %d; want 1", n)
	}
}

// The metrics' figures: the jobs by kind and state, and how long the
// oldest available one has waited (none works them here).
func TestStatsCountTheJobsAndTheOldestWait(t *testing.T) {
	st := testdb.Open(t)
	j := insertOnly(t, st)
	ctx := context.Background()
	if stats := j.Stats(); len(stats.Count) != 0 || stats.OldestAvailable != 0 {
		t.Fatalf("no jobs: %+v", stats)
	}
	for range 2 {
		if err := records.InTx(ctx, st.Client, func(tx *ent.Tx) error {
			return j.SignedPDF(ctx, tx, uuid.New(), uuid.New())
		}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	stats := j.Stats()
	if n := stats.Count[metrics.JobKey{Kind: "signed_pdf", State: "available"}]; n != 2 || len(stats.Count) != 1 {
		t.Errorf("jobs by kind and state: %v; want 2 signed_pdf available", stats.Count)
	}
	if stats.OldestAvailable < time.Second || stats.OldestAvailable > time.Minute {
		t.Errorf("the oldest available job waited %s; want a second or a little more", stats.OldestAvailable)
	}
}
