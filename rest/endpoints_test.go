package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/rest"
)

const base = rest.DefaultBaseURL

type summary struct {
	InventoryID       string                      `json:"inventoryId"`
	Property          struct{ PropertyID string } `json:"property"`
	InventoryType     int                         `json:"inventoryType"`
	InventoryTypeName string                      `json:"inventoryTypeName"`
	IsSigned          bool                        `json:"isSigned"`
	IsRemoteSigned    bool                        `json:"isRemoteSigned"`
	RentalPrice       float64                     `json:"rentalPrice"`
	PDFDownloadURL    *string                     `json:"pdfDownloadUrl"`
	CreatedAt         string                      `json:"createdAt"`
	SignatureDate     *string                     `json:"signatureDate"`
}

type listEnvelope struct {
	Success   bool
	Timestamp string
	Data      struct {
		Data            []summary
		Page            int
		PageSize        int
		TotalRecords    int
		TotalPages      int
		HasPreviousPage bool
		HasNextPage     bool
	}
}

func TestB1FollowsThePagingRule(t *testing.T) {
	a := demo(t)
	// The spec's example: page 1 of 40 records at 20 a page (company A has 40 signed inventories).
	var got listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "isSigned", "true"), &got)
	d := got.Data
	if !got.Success || got.Timestamp == "" || d.Page != 1 || d.PageSize != 20 || d.TotalRecords != 40 ||
		d.TotalPages != 2 || d.HasPreviousPage || !d.HasNextPage || len(d.Data) != 20 {
		t.Errorf("got %+v (%d rows), want page 1 of 2, 40 records, 20 rows, next but no previous", d, len(d.Data))
	}
	var middle listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "page", "2"), &middle)
	if m := middle.Data; len(m.Data) != 20 || m.Page != 2 || m.TotalRecords != 60 || m.TotalPages != 3 || !m.HasPreviousPage || !m.HasNextPage {
		t.Errorf("page 2 of 3: got %+v (%d rows), want 20 rows with a previous and a next page", m, len(m.Data))
	}
	var last listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "page", "3"), &last)
	if l := last.Data; len(l.Data) != 20 || !l.HasPreviousPage || l.HasNextPage {
		t.Errorf("page 3 of 3: got %+v (%d rows), want 20 rows, a previous page and no next", l, len(l.Data))
	}
	var past listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "page", "7"), &past)
	if p := past.Data; len(p.Data) != 0 || p.TotalRecords != 60 || p.TotalPages != 3 || !p.HasPreviousPage || p.HasNextPage {
		t.Errorf("page past the end: got %+v, want empty with true metadata", p)
	}
}

// The spec gives no maximum page size, and rule 1 has the list data describe
// the page returned: a larger size is served at the maximum, and says so.
// The envelope's timestamp has milliseconds, which every common parser reads.
func TestB1ServesALargerPageSizeAtTheMaximum(t *testing.T) {
	a := demo(t)
	var first listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "1"), &first)
	property := first.Data.Data[0].Property.PropertyID
	for _, path := range []string{
		base + "/inventories" + query("x-company-id", companyA, "pageSize", "500"),
		base + "/inventories/by-property" + query("x-company-id", companyA, "propertyId", property, "pageSize", "101"),
	} {
		var got listEnvelope
		a.getJSON(t, path, &got)
		if l := got.Data; l.PageSize != 100 || len(l.Data) != min(l.TotalRecords, 100) || l.TotalPages != (l.TotalRecords+99)/100 {
			t.Errorf("%s: got pageSize %d, %d rows of %d in %d pages; want the maximum, 100, and the metadata of that page",
				path, l.PageSize, len(l.Data), l.TotalRecords, l.TotalPages)
		}
		if !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`).MatchString(got.Timestamp) {
			t.Errorf("%s: timestamp %q, want UTC with milliseconds", path, got.Timestamp)
		}
	}
}

func TestB1FiltersAndSorts(t *testing.T) {
	a := demoWithFiles(t) // signed inventories have their PDFs, so pdfDownloadUrl is set
	for _, tt := range []struct {
		query string
		check func(summary) bool
	}{
		{query("inventoryType", "0"), func(s summary) bool { return s.InventoryType == 0 && s.InventoryTypeName == "captación" }},
		{query("inventoryType", "3", "isSigned", "false"), func(s summary) bool {
			// pdfDownloadUrl is a string, as the spec types it: "" while unsigned.
			return s.InventoryType == 3 && !s.IsSigned && s.SignatureDate == nil && s.PDFDownloadURL != nil && *s.PDFDownloadURL == ""
		}},
		// Booleans in any case: .NET writes True and False.
		{query("isSigned", "True"), func(s summary) bool { return s.IsSigned }},
		{query("isSigned", "FALSE"), func(s summary) bool { return !s.IsSigned }},
		{query("isSigned", "true"), func(s summary) bool {
			return s.IsSigned && s.PDFDownloadURL != nil && strings.HasSuffix(*s.PDFDownloadURL, "/inventory/download-pdf/"+s.InventoryID)
		}},
		{query("isSigned", "null", "inventoryType", "null"), nil},
	} {
		var got listEnvelope
		a.getJSON(t, base+"/inventories"+tt.query+"&x-company-id="+companyA+"&pageSize=100", &got)
		if len(got.Data.Data) == 0 || len(got.Data.Data) != got.Data.TotalRecords {
			t.Errorf("%s: %d of %d rows", tt.query, len(got.Data.Data), got.Data.TotalRecords)
		}
		for _, s := range got.Data.Data {
			if tt.check != nil && !tt.check(s) {
				t.Errorf("%s: %+v does not match", tt.query, s)
			}
		}
	}
	// Defaults: createdAt, newest first.
	var byDefault listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100"), &byDefault)
	for i := 1; i < len(byDefault.Data.Data); i++ {
		if byDefault.Data.Data[i].CreatedAt > byDefault.Data.Data[i-1].CreatedAt {
			t.Fatalf("default order: %s after %s, want createdAt descending", byDefault.Data.Data[i].CreatedAt, byDefault.Data.Data[i-1].CreatedAt)
		}
	}
	var oldest listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100", "sortOrder", "asc"), &oldest)
	for i := 1; i < len(oldest.Data.Data); i++ {
		if oldest.Data.Data[i].CreatedAt < oldest.Data.Data[i-1].CreatedAt {
			t.Fatalf("sortOrder asc: %s after %s, want createdAt ascending", oldest.Data.Data[i].CreatedAt, oldest.Data.Data[i-1].CreatedAt)
		}
	}
	var bySignature listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100", "sortBy", "signatureDate", "sortOrder", "asc"), &bySignature)
	rows := bySignature.Data.Data
	for i := 1; i < len(rows); i++ {
		prev, cur := rows[i-1].SignatureDate, rows[i].SignatureDate
		if prev == nil && cur != nil || prev != nil && cur != nil && *cur < *prev {
			t.Fatalf("signatureDate asc: %v then %v at %d, want ascending with unsigned last", prev, cur, i)
		}
	}
	var bySignatureDesc listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100", "sortBy", "signatureDate"), &bySignatureDesc)
	rows = bySignatureDesc.Data.Data
	for i := 1; i < len(rows); i++ {
		prev, cur := rows[i-1].SignatureDate, rows[i].SignatureDate
		if prev == nil && cur != nil || prev != nil && cur != nil && *cur > *prev {
			t.Fatalf("signatureDate desc: %v then %v at %d, want descending with unsigned last", prev, cur, i)
		}
	}
}

// TestB1SortsBySignatureDateUnsignedLastOnAnIndex: inventories without a
// signature date come last in both directions, so the first page by
// signature date holds signed ones only, and the database reads the page
// from an index in that order (no sort step) on SQLite and PostgreSQL.
func TestB1SortsBySignatureDateUnsignedLastOnAnIndex(t *testing.T) {
	var counter testdb.Counter
	a := serve(t, datagen.Demo, false, counter.Option())
	for _, order := range []string{"asc", "desc"} {
		counter.Reset()
		var first listEnvelope
		a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "sortBy", "signatureDate", "sortOrder", order), &first)
		rows := first.Data.Data
		if len(rows) != 20 || first.Data.TotalRecords <= 20 {
			t.Fatalf("%s: page 1 has %d rows of %d: want a full page of several", order, len(rows), first.Data.TotalRecords)
		}
		for i, row := range rows {
			if row.SignatureDate == nil {
				t.Errorf("%s: row %d of page 1 is unsigned: want signed inventories first", order, i)
			}
		}
		var last listEnvelope
		a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "sortBy", "signatureDate", "sortOrder", order,
			"page", fmt.Sprint(first.Data.TotalPages)), &last)
		if rows := last.Data.Data; len(rows) == 0 || rows[len(rows)-1].SignatureDate != nil {
			t.Errorf("%s: the last page does not end with an unsigned inventory: %+v", order, rows)
		}

		index := map[string]string{"asc": "inventory_company_id_signature_sort_date_id",
			"desc": "inventory_company_id_signature_sort_date_desc_id"}[order]
		readOffIndexInOrder(t, &counter, order, index)
	}
}

// readOffIndexInOrder fails unless the first ordered statement counter saw
// is read off an index (index, when given) in its order, with no sort step:
// then a page stops at its end, and the rows an offset skips are passed over
// on the index, whatever the page's number.
func readOffIndexInOrder(t *testing.T, counter *testdb.Counter, label, index string) {
	t.Helper()
	page, args, ok := counter.Find("ORDER BY")
	if !ok {
		t.Fatalf("%s: no ordered statement among:\n%s", label, counter.Statements())
	}
	plan, err := counter.Plan(context.Background(), page, args)
	if err != nil {
		t.Fatalf("%s: explaining %s: %v", label, page, err)
	}
	if !strings.Contains(plan, index) || !strings.Contains(strings.ToLower(plan), "index") ||
		strings.Contains(plan, "Sort") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("%s: want the page read off an index %s in order, no sort step:\n%s\nplan:\n%s", label, index, page, plan)
	}
}

// TestEveryPageIsReadOffAnIndexInOrder: every order a numbered page or a
// connection can ask for, REST's and GraphQL's, on the page a legacy client
// reaches last.
func TestEveryPageIsReadOffAnIndexInOrder(t *testing.T) {
	var counter testdb.Counter
	a := serve(t, datagen.Demo, false, counter.Option())
	for _, order := range []string{"asc", "desc"} {
		counter.Reset()
		a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "sortOrder", order, "page", "3"), new(listEnvelope))
		readOffIndexInOrder(t, &counter, "B1 by createdAt "+order, "inventory_company_id_created_at_id")

		counter.Reset()
		a.getJSON(t, "/property/get_properties/"+companyA+query("page", "2", "sorter", order), new(any))
		readOffIndexInOrder(t, &counter, "A4 "+order, "property_company_id_created_at_id")
	}
	var first listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "1"), &first)
	counter.Reset()
	a.getJSON(t, base+"/inventories/by-property"+query("x-company-id", companyA,
		"propertyId", first.Data.Data[0].Property.PropertyID, "pageSize", "1", "page", "2"), new(listEnvelope))
	readOffIndexInOrder(t, &counter, "B3", "inventory_property_id_created_at_id")

	for _, tc := range []struct{ list, order string }{
		{"inventoryPage", "CREATED_AT"}, {"inventoryPage", "SIGNATURE_DATE"},
		{"inventoryPage", "RENTAL_PRICE"}, {"inventoryPage", "INVENTORY_TYPE"},
		{"propertyPage", "CREATED_AT"}, {"propertyPage", "CITY"}, {"propertyPage", "CODE"},
	} {
		for _, direction := range []string{"ASC", "DESC"} {
			counter.Reset()
			doc := fmt.Sprintf(`{ %s(page: 2, pageSize: 5, orderBy: {field: %s, direction: %s}) { totalRecords data { id } } }`,
				tc.list, tc.order, direction)
			if res := a.GraphQL(t, companyA, doc, nil); len(res.Errors) > 0 {
				t.Fatalf("%s: %v", doc, res.Errors)
			}
			readOffIndexInOrder(t, &counter, tc.list+" by "+tc.order+" "+direction, "")
		}
	}
	// Connections without orderBy are in id order, entered at the root or
	// after a cursor.
	for _, list := range []string{"inventories", "properties"} {
		var first struct {
			Data map[string]struct {
				PageInfo struct{ EndCursor string } `json:"pageInfo"`
			} `json:"data"`
		}
		a.MustData(t, companyA, `{ `+list+`(first: 3) { pageInfo { endCursor } } }`, nil, &first.Data)
		counter.Reset()
		if res := a.GraphQL(t, companyA, `query($after: Cursor) { `+list+`(first: 3, after: $after) { edges { node { id } } } }`,
			map[string]any{"after": first.Data[list].PageInfo.EndCursor}); len(res.Errors) > 0 {
			t.Fatalf("%s: %v", list, res.Errors)
		}
		readOffIndexInOrder(t, &counter, list+" without orderBy", "")
	}
}

// TestA4SortsByCreationDate: sorter orders company A's 20 properties by
// creation date, both ways.
func TestA4SortsByCreationDate(t *testing.T) {
	a := demo(t)
	type propertyPage struct {
		Data []struct {
			PropertyID   string `json:"PropertyId"`
			CreationDate string
		}
	}
	var asc, desc propertyPage
	a.getJSON(t, "/property/get_properties/"+companyA+query("page", "1", "sorter", "asc"), &asc)
	a.getJSON(t, "/property/get_properties/"+companyA+query("page", "1", "sorter", "desc"), &desc)
	if len(asc.Data) != 20 || len(desc.Data) != 20 {
		t.Fatalf("got %d and %d properties, want company A's 20 each way", len(asc.Data), len(desc.Data))
	}
	for i := range asc.Data {
		if i > 0 && asc.Data[i].CreationDate < asc.Data[i-1].CreationDate {
			t.Errorf("sorter asc: %s after %s", asc.Data[i].CreationDate, asc.Data[i-1].CreationDate)
		}
		if mirror := desc.Data[len(desc.Data)-1-i]; mirror.PropertyID != asc.Data[i].PropertyID {
			t.Errorf("position %d: asc has %s, desc's mirror has %s: want the reverse order", i, asc.Data[i].PropertyID, mirror.PropertyID)
		}
	}
	if asc.Data[0].CreationDate == asc.Data[19].CreationDate {
		t.Errorf("every property has the same creation date: the order is not tested")
	}
}

// TestB3ListsAPropertysInventoriesNewestFirst, under rule 1 on every page.
func TestB3ListsAPropertysInventoriesNewestFirst(t *testing.T) {
	a := demo(t)
	var first listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "1"), &first)
	property := first.Data.Data[0].Property.PropertyID
	n := datagen.Demo.InventoriesPerProperty // 3: two pages of 2
	var seen []summary
	for page := 1; page <= 3; page++ {
		var got listEnvelope
		a.getJSON(t, base+"/inventories/by-property"+query("x-company-id", companyA, "propertyId", property, "pageSize", "2", "page", fmt.Sprint(page)), &got)
		d := got.Data
		wantRows := max(min(2, n-(page-1)*2), 0)
		if !got.Success || d.Page != page || d.PageSize != 2 || d.TotalRecords != n || d.TotalPages != 2 ||
			d.HasPreviousPage != (page > 1) || d.HasNextPage != (page < 2) || len(d.Data) != wantRows {
			t.Errorf("page %d: got %+v (%d rows), want %d rows of %d in 2 pages", page, d, len(d.Data), wantRows, n)
		}
		seen = append(seen, d.Data...)
	}
	if len(seen) != n {
		t.Fatalf("walk: %d inventories, want %d", len(seen), n)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].CreatedAt > seen[i-1].CreatedAt {
			t.Errorf("createdAt %s after %s: want newest first", seen[i].CreatedAt, seen[i-1].CreatedAt)
		}
	}
}

func TestPagingWalksHoldEveryRecordOnce(t *testing.T) {
	a := serve(t, datagen.Size{Companies: 2, PropertiesPerCompany: 45, InventoriesPerProperty: 2,
		MinEnvironments: 1, MaxEnvironments: 2, MinItems: 1, MaxItems: 2, MaxPhotos: 1}, false)

	t.Run("B1", func(t *testing.T) {
		var ids []string
		for page := 1; ; page++ {
			var got listEnvelope
			a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "13", "page", fmt.Sprint(page), "sortBy", "signatureDate"), &got)
			for _, s := range got.Data.Data {
				ids = append(ids, s.InventoryID)
			}
			if !got.Data.HasNextPage {
				break
			}
		}
		once(t, ids, 90)
	})

	t.Run("A4 and B3", func(t *testing.T) {
		var properties []string
		page := 1
		for walked := 0; page != -1 && walked < 10; walked++ {
			var got struct {
				Data []struct {
					PropertyID string `json:"PropertyId"`
				}
				Meta struct {
					Total, LastPage, CurrentPage, PerPage int
					Prev, Next                            *int
				}
				NewOffset int
			}
			a.getJSON(t, "/property/get_properties/"+companyA+query("page", fmt.Sprint(page), "sorter", "desc"), &got)
			m := got.Meta
			if m.Total != 45 || m.LastPage != 3 || m.CurrentPage != page || m.PerPage != 20 || len(got.Data) > 20 {
				t.Errorf("page %d meta: %+v with %d rows", page, m, len(got.Data))
			}
			if (page == 1) != (m.Prev == nil) || (page == 3) != (m.Next == nil) || (m.Next != nil && *m.Next != page+1) {
				t.Errorf("page %d: prev %v next %v", page, m.Prev, m.Next)
			}
			for _, p := range got.Data {
				properties = append(properties, p.PropertyID)
			}
			if page == 3 && got.NewOffset != -1 || page < 3 && got.NewOffset != page+1 {
				t.Errorf("page %d: newOffset %d", page, got.NewOffset)
			}
			page = got.NewOffset
		}
		once(t, properties, 45)
		var past struct {
			Data []struct{}
			Meta struct {
				Total, LastPage, CurrentPage int
				Prev, Next                   *int
			}
			NewOffset int
		}
		a.getJSON(t, "/property/get_properties/"+companyA+query("page", "5", "sorter", "asc"), &past)
		if m := past.Meta; len(past.Data) != 0 || m.Total != 45 || m.LastPage != 3 || m.CurrentPage != 5 ||
			m.Prev == nil || *m.Prev != 4 || m.Next != nil || past.NewOffset != -1 {
			t.Errorf("A4 past the end: got %+v, want no rows, true totals, prev 4, no next, newOffset -1", past)
		}

		var inventories []string
		for page := 1; ; page++ {
			var got listEnvelope
			a.getJSON(t, base+"/inventories/by-property"+query("x-company-id", companyA, "propertyId", properties[0], "pageSize", "1", "page", fmt.Sprint(page)), &got)
			for _, s := range got.Data.Data {
				if s.Property.PropertyID != properties[0] {
					t.Errorf("B3 for %s returned an inventory of %s", properties[0], s.Property.PropertyID)
				}
				inventories = append(inventories, s.InventoryID)
			}
			if !got.Data.HasNextPage {
				break
			}
		}
		once(t, inventories, 2)
	})
}

func once(t *testing.T, ids []string, want int) {
	t.Helper()
	sorted := slices.Clone(ids)
	sort.Strings(sorted)
	if distinct := len(slices.Compact(sorted)); len(ids) != want || distinct != want {
		t.Errorf("walk: %d records, %d distinct, want each of %d once", len(ids), distinct, want)
	}
}

type a1Inventory struct {
	InventoryID   string `json:"InventoryId"`
	InventoryType int
	RentalPrice   string
	IsSigned      bool
	ApprovalCode  *string `json:"Approval_Code"`
	CreationDate  string
	SignatureDate *string
	Property      struct {
		PropertyID string `json:"PropertyId"`
		Levels     int
	}
	EnvironmentDiagnostics []struct {
		Level          int
		ItemDiagnostic []struct {
			ItemDiagnosticID string `json:"ItemDiagnosticId"`
			Order            *int
			Photo            []struct{ StorageReference string }
		}
	}
}

func TestTheSameInventoryReadsTheSameEverywhere(t *testing.T) {
	a := demo(t)
	var list listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100"), &list)
	for _, s := range []summary{list.Data.Data[0], list.Data.Data[1], list.Data.Data[2]} {
		var a1 a1Inventory
		a.getJSON(t, "/inventory/detail/"+s.InventoryID, &a1)
		var b2 struct {
			Data struct {
				InventoryType  int
				IsSigned       bool
				IsRemoteSigned bool
				RentalPrice    float64
				ApprovalCode   *string
				CreatedAt      string
				Signatures     struct{ SignatureDate *string }
				PDFDownloadURL *string `json:"pdfDownloadUrl"`
				Stats          struct{ TotalEnvironments, TotalItems int }
			}
		}
		a.getJSON(t, base+"/inventories/details"+query("x-company-id", companyA, "InventoryId", s.InventoryID), &b2)
		var gql struct {
			Node struct {
				InventoryTypeCode int     `json:"inventoryTypeCode"`
				IsSigned          bool    `json:"isSigned"`
				IsRemoteSigned    bool    `json:"isRemoteSigned"`
				RentalPrice       string  `json:"rentalPrice"`
				CreatedAt         string  `json:"createdAt"`
				SignatureDate     *string `json:"signatureDate"`
				Environments      []struct {
					Items []struct{ ID string } `json:"items"`
				} `json:"environments"`
			} `json:"node"`
		}
		a.MustData(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { inventoryTypeCode isSigned isRemoteSigned rentalPrice createdAt signatureDate environments { items { id } } } } }`,
			map[string]any{"id": s.InventoryID}, &gql)

		items := 0
		for _, env := range a1.EnvironmentDiagnostics {
			items += len(env.ItemDiagnostic)
		}
		gqlItems := 0
		for _, env := range gql.Node.Environments {
			gqlItems += len(env.Items)
		}
		d := b2.Data
		same := a1.InventoryType == s.InventoryType && d.InventoryType == s.InventoryType && gql.Node.InventoryTypeCode == s.InventoryType &&
			a1.IsSigned == s.IsSigned && d.IsSigned == s.IsSigned && gql.Node.IsSigned == s.IsSigned &&
			d.IsRemoteSigned == s.IsRemoteSigned && gql.Node.IsRemoteSigned == s.IsRemoteSigned &&
			a1.RentalPrice == gql.Node.RentalPrice && fmt.Sprintf("%.2f", s.RentalPrice) == a1.RentalPrice && d.RentalPrice == s.RentalPrice &&
			a1.CreationDate == s.CreatedAt && d.CreatedAt == s.CreatedAt && gql.Node.CreatedAt == s.CreatedAt &&
			fmt.Sprint(deref(a1.SignatureDate)) == fmt.Sprint(deref(s.SignatureDate)) && fmt.Sprint(deref(d.Signatures.SignatureDate)) == fmt.Sprint(deref(s.SignatureDate)) &&
			fmt.Sprint(deref(gql.Node.SignatureDate)) == fmt.Sprint(deref(s.SignatureDate)) &&
			fmt.Sprint(deref(a1.ApprovalCode)) == fmt.Sprint(deref(d.ApprovalCode)) &&
			d.Stats.TotalEnvironments == len(a1.EnvironmentDiagnostics) && len(gql.Node.Environments) == len(a1.EnvironmentDiagnostics) &&
			d.Stats.TotalItems == items && gqlItems == items && items > 0 &&
			fmt.Sprint(deref(d.PDFDownloadURL)) == fmt.Sprint(deref(s.PDFDownloadURL))
		if !same {
			t.Errorf("inventory %s reads differently:\nB1 %+v\nA1 %+v\nB2 %+v\nGraphQL %+v", s.InventoryID, s, a1, d, gql.Node)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestA1AndA5(t *testing.T) {
	a := demo(t)
	var list listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100"), &list)
	var inv a1Inventory
	a.getJSON(t, "/inventory/detail/"+list.Data.Data[0].InventoryID, &inv)
	if inv.Property.PropertyID == "" || inv.Property.Levels < 1 || len(inv.EnvironmentDiagnostics) == 0 {
		t.Fatalf("A1: %+v", inv)
	}
	for _, env := range inv.EnvironmentDiagnostics {
		if env.Level < 1 || env.Level > inv.Property.Levels {
			t.Errorf("environment level %d outside 1..%d", env.Level, inv.Property.Levels)
		}
		for _, it := range env.ItemDiagnostic {
			if it.ItemDiagnosticID == "" || it.Photo == nil {
				t.Errorf("item %+v: want an id and a photo array", it)
			}
		}
	}
	if res := a.get(t, "/inventory/detail/"+inv.Property.PropertyID); res.status != http.StatusNotFound {
		t.Errorf("A1 with a property's id: got %d, want 404", res.status)
	}

	var prop struct {
		PropertyID   string `json:"PropertyId"`
		PropertyType struct{ TypeName string }
		Levels       int
		Inventories  []struct {
			InventoryID  string `json:"InventoryId"`
			CreationDate string
		}
	}
	a.getJSON(t, "/property/get_property_uuid/"+inv.Property.PropertyID, &prop)
	if prop.PropertyID != inv.Property.PropertyID || prop.PropertyType.TypeName == "" || prop.Levels != inv.Property.Levels || len(prop.Inventories) != datagen.Demo.InventoriesPerProperty {
		t.Errorf("A5: %+v", prop)
	}
	for i := 1; i < len(prop.Inventories); i++ {
		if prop.Inventories[i].CreationDate > prop.Inventories[i-1].CreationDate {
			t.Errorf("A5 inventories: want newest first")
		}
	}
}

func TestBadInputIsA400NamingTheParameter(t *testing.T) {
	a := demo(t)
	someUUID := "5b0c0f0e-8d4c-4c59-9d0e-1f2a3b4c5d6e"
	inv := base + "/inventories"
	for _, tt := range []struct{ path, parameter string }{
		{inv, "x-company-id"},
		{inv + query("x-company-id", "nope"), "x-company-id"},
		{inv + query("x-company-id", companyA, "inventoryType", "4"), "inventoryType"},
		{inv + query("x-company-id", companyA, "inventoryType", "two"), "inventoryType"},
		{inv + query("x-company-id", companyA, "isSigned", "yes"), "isSigned"},
		{inv + query("x-company-id", companyA, "sortBy", "price"), "sortBy"},
		{inv + query("x-company-id", companyA, "sortOrder", "up"), "sortOrder"},
		{inv + query("x-company-id", companyA, "page", "0"), "page"},
		{inv + query("x-company-id", companyA, "page", "1.5"), "page"},
		{inv + query("x-company-id", companyA, "page", "99999999999999999999"), "page"},
		{inv + query("x-company-id", companyA, "pageSize", "0"), "pageSize"},
		{inv + "/details" + query("x-company-id", companyA), "InventoryId"},
		{inv + "/details" + query("x-company-id", companyA, "InventoryId", "123"), "InventoryId"},
		{inv + "/details" + query("InventoryId", someUUID), "x-company-id"},
		{inv + "/by-property" + query("x-company-id", companyA), "propertyId"},
		{inv + "/by-property" + query("x-company-id", companyA, "propertyId", someUUID, "pageSize", "-1"), "pageSize"},
		{"/inventory/detail/not-a-uuid", "inventoryId"},
		{"/inventory/detail/" + someUUID + query("x-company-id", "x"), "x-company-id"},
		{"/property/get_properties/" + companyA + query("sorter", "asc"), "page"},
		{"/property/get_properties/" + companyA + query("page", "1"), "sorter"},
		{"/property/get_properties/" + companyA + query("page", "1", "sorter", "newest"), "sorter"},
		{"/property/get_properties/nope" + query("page", "1", "sorter", "asc"), "companyId"},
		{"/property/get_properties/" + companyA + query("page", "1", "sorter", "asc", "x-company-id", companyB), "x-company-id"},
		{"/property/get_property_uuid/123", "propertyId"},
		{inv + "/by-property" + query("propertyId", someUUID), "x-company-id"},
		{inv + "/by-property" + query("x-company-id", companyA, "propertyId", someUUID, "page", "two"), "page"},
		{"/inventory/download-pdf/not-a-uuid", "inventoryId"},
		{"/inventory/download-photos/itemDiagnostic/not-a-uuid", "id"},
		{"/inventory/download-photos/itemDiagnostic/" + someUUID + query("x-company-id", "x"), "x-company-id"},
		// Only the canonical form: no braces, urn:uuid: prefix or missing dashes.
		{"/inventory/detail/{" + someUUID + "}", "inventoryId"},
		{"/inventory/detail/urn:uuid:" + someUUID, "inventoryId"},
		{"/inventory/detail/" + strings.ReplaceAll(someUUID, "-", ""), "inventoryId"},
		{inv + query("x-company-id", strings.ReplaceAll(companyA, "-", "")), "x-company-id"},
	} {
		res := a.get(t, tt.path)
		code, parameter := errorOf(t, res)
		if res.status != http.StatusBadRequest || code != "INVALID_ARGUMENT" || parameter != tt.parameter {
			t.Errorf("%s: got %d %s on %q, want 400 INVALID_ARGUMENT on %q", tt.path, res.status, code, parameter, tt.parameter)
		}
	}

	header := http.Header{"X-Company-Id": {companyB}}
	if res := a.call(t, http.MethodGet, inv+query("x-company-id", companyA), header); res.status != http.StatusBadRequest {
		t.Errorf("query and header naming different companies: got %d, want 400", res.status)
	}
	if res := a.call(t, http.MethodGet, inv, http.Header{"X-Company-Id": {companyA}}); res.status != http.StatusOK {
		t.Errorf("company in the header: got %d, want 200", res.status)
	}

	for _, path := range []string{"/inventory/detail/" + someUUID, "/property/get_property_uuid/" + someUUID,
		inv + "/details" + query("x-company-id", companyA, "InventoryId", someUUID),
		inv + "/by-property" + query("x-company-id", companyA, "propertyId", someUUID)} {
		res := a.get(t, path)
		if code, _ := errorOf(t, res); res.status != http.StatusNotFound || code != "NOT_FOUND" {
			t.Errorf("%s: got %d %s, want 404 NOT_FOUND", path, res.status, code)
		}
	}
	for _, path := range []string{inv + query("x-company-id", companyA), inv + "/details", inv + "/by-property",
		"/inventory/detail/" + someUUID, "/inventory/download-pdf/" + someUUID, "/inventory/download-photos/itemDiagnostic/" + someUUID,
		"/property/get_properties/" + companyA, "/property/get_property_uuid/" + someUUID, "/files/photos/a.jpg"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			res := a.call(t, method, path, nil)
			if code, _ := errorOf(t, res); res.status != http.StatusMethodNotAllowed || code != "METHOD_NOT_ALLOWED" || res.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: got %d %s, want 405 with Allow: GET, HEAD", method, path, res.status, code)
			}
			a.validateError(t, res)
		}
	}
	if res := a.call(t, http.MethodHead, inv+query("x-company-id", companyA), nil); res.status != http.StatusOK || len(res.body) != 0 {
		t.Errorf("HEAD: got %d with %d bytes, want 200 and no body", res.status, len(res.body))
	}
}

func TestCompaniesSeeOnlyTheirOwn(t *testing.T) {
	a := demo(t)
	var listA, listB listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "100"), &listA)
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyB, "pageSize", "100"), &listB)
	ofA := map[string]bool{}
	for _, s := range listA.Data.Data {
		ofA[s.InventoryID], ofA[s.Property.PropertyID] = true, true
	}
	for _, s := range listB.Data.Data {
		if ofA[s.InventoryID] || ofA[s.Property.PropertyID] {
			t.Fatalf("B1 shows company B a record of company A: %+v", s)
		}
	}
	var propsB struct {
		Data []struct {
			PropertyID string `json:"PropertyId"`
		}
	}
	a.getJSON(t, "/property/get_properties/"+companyB+query("page", "1", "sorter", "asc"), &propsB)
	for _, p := range propsB.Data {
		if ofA[p.PropertyID] {
			t.Fatalf("A4 for company B lists company A's property %s", p.PropertyID)
		}
	}
	if len(propsB.Data) != 20 {
		t.Errorf("A4 for company B: %d properties, want its 20", len(propsB.Data))
	}

	invA, propA := listA.Data.Data[0].InventoryID, listA.Data.Data[0].Property.PropertyID
	var detailA a1Inventory
	a.getJSON(t, "/inventory/detail/"+invA, &detailA)
	itemA := detailA.EnvironmentDiagnostics[0].ItemDiagnostic[0].ItemDiagnosticID
	for _, path := range []string{
		base + "/inventories/details" + query("x-company-id", companyB, "InventoryId", invA),
		base + "/inventories/by-property" + query("x-company-id", companyB, "propertyId", propA),
		"/inventory/detail/" + invA + query("x-company-id", companyB),
		"/property/get_property_uuid/" + propA + query("x-company-id", companyB),
		"/inventory/download-pdf/" + invA + query("x-company-id", companyB),
		"/inventory/download-photos/itemDiagnostic/" + itemA + query("x-company-id", companyB),
	} {
		if res := a.get(t, path); res.status != http.StatusNotFound {
			t.Errorf("company B reading company A's record at %s: got %d %s, want 404", path, res.status, res.body)
		}
	}
	for _, path := range []string{"/inventory/detail/" + invA, "/property/get_property_uuid/" + propA,
		"/inventory/detail/" + invA + query("x-company-id", companyA),
		"/inventory/download-photos/itemDiagnostic/" + itemA, "/inventory/download-photos/itemDiagnostic/" + itemA + query("x-company-id", companyA)} {
		if res := a.get(t, path); res.status != http.StatusOK {
			t.Errorf("%s: got %d, want 200 (the legacy lookup by UUID, or the owner's company)", path, res.status)
		}
	}
}

func TestUnknownPathsAreJSON404(t *testing.T) {
	a := demo(t)
	res, body := a.Get(t, "/inventory/nothing-here", nil)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"NOT_FOUND"`) {
		t.Errorf("got %d %s", res.StatusCode, body)
	}
}
