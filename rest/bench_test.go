package rest_test

import (
	"net/http"
	"testing"
)

// The REST endpoints beside the GraphQL query for the same data, over real
// HTTP on the demo data, so `go test -bench . ./rest/` gives their ratio.
// Both sides name the company and ask for the same fields, so the difference
// is the adapter: the in-process hop and the reshaping. The database is
// SQLite, or PostgreSQL when TEST_DATABASE_URL is set.

const a1Equivalent = `query($id: ID!) { node(id: $id) { __typename ... on Inventory {
	id inventoryTypeCode rentalPrice isSigned approvalCode createdAt signatureDate
	property { id code address neighborhood city propertyType levels }
	environments { description name level items { id description rating order toRepair name material { name } photos { storageReference } } } } } }`

const b1Equivalent = `query($where: InventoryWhereInput) { inventoryPage(page: 1, pageSize: 20, where: $where, orderBy: {field: CREATED_AT, direction: DESC}) {
	data { id property { id code address city } inventoryTypeCode inventoryTypeName isSigned isRemoteSigned rentalPrice currency pdfUrl createdAt signatureDate }
	page pageSize totalRecords totalPages hasPreviousPage hasNextPage } }`

func BenchmarkInventoryDetail(b *testing.B) {
	a := demo(b)
	var list listEnvelope
	a.getJSON(b, base+"/inventories"+query("x-company-id", companyA), &list)
	id := list.Data.Data[0].InventoryID

	b.Run("REST A1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, _ := a.Get(b, "/inventory/detail/"+id+query("x-company-id", companyA), nil); res.StatusCode != http.StatusOK {
				b.Fatal(res.Status)
			}
		}
	})
	b.Run("GraphQL", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := a.GraphQL(b, companyA, a1Equivalent, map[string]any{"id": id}); len(res.Errors) > 0 {
				b.Fatal(res.Errors)
			}
		}
	})
}

func BenchmarkInventoryList(b *testing.B) {
	a := demo(b)
	b.Run("REST B1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, _ := a.Get(b, base+"/inventories"+query("x-company-id", companyA), nil); res.StatusCode != http.StatusOK {
				b.Fatal(res.Status)
			}
		}
	})
	b.Run("GraphQL", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := a.GraphQL(b, companyA, b1Equivalent, nil); len(res.Errors) > 0 {
				b.Fatal(res.Errors)
			}
		}
	})
}
