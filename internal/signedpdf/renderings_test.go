package signedpdf_test

import (
	"context"
	"log/slog"
	"os"
	"slices"
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
