package signedpdf_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/signedpdf"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// TestRenderingsAreSharedFairlyBetweenCompanies: a company whose PDFs were
// asked for first does not hold the places for all of them: another
// company's, asked for after, is made before the first company's last.
func TestRenderingsAreSharedFairlyBetweenCompanies(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	r := signedpdf.NewRenderings(signedpdf.New(st.Client, apitest.Files(t), nil), slog.New(slog.DiscardHandler), signedpdf.RenderingOptions{})
	t.Cleanup(r.Close)
	unkept := func(company uuid.UUID, n int) []uuid.UUID {
		ids, err := st.Client.Inventory.Query().Where(inventory.IsSigned(true), inventory.PdfSha256IsNil()).
			Order(inventory.ByID()).Limit(n).IDs(tenant.WithCompany(context.Background(), company))
		if err != nil || len(ids) < n {
			t.Fatalf("signed inventories without a PDF of %s: %v, %v; want %d", company, ids, err, n)
		}
		return ids
	}
	first, second := unkept(datagen.DemoCompanies[0], 4), unkept(datagen.DemoCompanies[1], 1)
	var (
		mu    sync.Mutex
		order []uuid.UUID
		wg    sync.WaitGroup
	)
	for _, id := range append(slices.Clone(first), second...) {
		r.Start(id)
		wg.Go(func() {
			if _, err := r.Await(context.Background(), id); err != nil {
				t.Errorf("inventory %s: %v", id, err)
			}
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
		})
	}
	wg.Wait()
	if at := slices.Index(order, second[0]); at == len(order)-1 {
		t.Errorf("the second company's PDF was made last, after all %d of the first's: renderings are not shared fairly", len(first))
	}
}

// A download that read "not kept" just before the rendering kept the PDF
// asks for it after the rendering left: it is served the kept PDF, and the
// PDF is not rendered (nor its file written) a second time.
func TestAPDFKeptMeanwhileIsServedNotRenderedAgain(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	fs := apitest.Files(t)
	r := signedpdf.NewRenderings(signedpdf.New(st.Client, fs, nil), slog.New(slog.DiscardHandler), signedpdf.RenderingOptions{})
	t.Cleanup(r.Close)
	ctx := tenant.Unrestricted(context.Background(), "test: a signed inventory without its PDF")
	id, err := st.Client.Inventory.Query().Where(inventory.IsSigned(true), inventory.PdfSha256IsNil()).Order(inventory.ByID()).FirstID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Await(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	logs := &apitest.LogBuffer{}
	previous := slog.Default()
	slog.SetDefault(slog.New(logs.Logger(slog.LevelInfo).Handler()))
	t.Cleanup(func() { slog.SetDefault(previous) })

	again, err := r.Await(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if again.SHA256 != first.SHA256 || !bytes.Equal(again.Data, first.Data) {
		t.Errorf("the PDF asked for again: digest %s, want the kept one, %s", again.SHA256, first.SHA256)
	}
	lines := logs.String()
	if strings.Contains(lines, "rendering it in the background") {
		t.Errorf("the kept PDF was rendered again:\n%s", lines)
	}
	if !strings.Contains(lines, "reading it if it was kept meanwhile") {
		t.Errorf("the kept PDF was not read from the store:\n%s", lines)
	}
}
