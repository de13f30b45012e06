package graph_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/graph/graphqlhttp"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/rest"
)

var (
	companyA = datagen.DemoCompanies[0].String()
	companyB = datagen.DemoCompanies[1].String()
)

// demo serves a database of the test's own holding the demo dataset's
// records (its files are the REST tests' concern).
func demo(t testing.TB, opts ...store.Option) (*apitest.Server, *store.Store) {
	t.Helper()
	st := testdb.DemoRecords.Open(t, opts...)
	return apitest.NewServer(t, st, nil), st
}

type inventoryTree struct {
	ID                string  `json:"id"`
	InventoryType     string  `json:"inventoryType"`
	InventoryTypeCode int     `json:"inventoryTypeCode"`
	InventoryTypeName string  `json:"inventoryTypeName"`
	RentalPrice       string  `json:"rentalPrice"`
	Currency          string  `json:"currency"`
	IsSigned          bool    `json:"isSigned"`
	IsRemoteSigned    bool    `json:"isRemoteSigned"`
	ApprovalCode      *string `json:"approvalCode"`
	CreatedAt         string  `json:"createdAt"`
	SignatureDate     *string `json:"signatureDate"`
	Property          struct {
		ID      string `json:"id"`
		Address string `json:"address"`
		City    string `json:"city"`
		Levels  int    `json:"levels"`
	} `json:"property"`
	Environments []struct {
		Name  string `json:"name"`
		Level int    `json:"level"`
		Order int    `json:"order"`
		Items []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Rating   int    `json:"rating"`
			Order    *int   `json:"order"`
			Material struct {
				Name string `json:"name"`
			} `json:"material"`
			Photos []struct {
				StorageReference string `json:"storageReference"`
			} `json:"photos"`
		} `json:"items"`
	} `json:"environments"`
}

type connection struct {
	Inventories struct {
		TotalCount int `json:"totalCount"`
		Edges      []struct {
			Node inventoryTree `json:"node"`
		} `json:"edges"`
	} `json:"inventories"`
}

func TestNestedQueryReturnsWholeInventoryTree(t *testing.T) {
	srv, _ := demo(t)
	var got connection
	srv.MustData(t, companyA, ide.ExampleQuery, nil, &got)

	if got.Inventories.TotalCount != 60 {
		t.Errorf("totalCount: got %d, want 60 (company A's inventories)", got.Inventories.TotalCount)
	}
	if n := len(got.Inventories.Edges); n != 3 {
		t.Fatalf("edges: got %d, want 3", n)
	}
	var prev string
	for _, e := range got.Inventories.Edges {
		inv := e.Node
		if prev != "" && inv.CreatedAt > prev {
			t.Errorf("createdAt %s after %s: want newest first", inv.CreatedAt, prev)
		}
		prev = inv.CreatedAt
		if inv.Property.ID == "" || inv.Property.Address == "" || inv.Property.City == "" {
			t.Errorf("inventory %s: property incomplete: %+v", inv.ID, inv.Property)
		}
		if !strings.HasSuffix(inv.CreatedAt, "Z") {
			t.Errorf("createdAt %q: want UTC RFC 3339", inv.CreatedAt)
		}
		if !strings.HasSuffix(inv.RentalPrice, ".00") || inv.Currency != "COP" {
			t.Errorf("price: got %s %s, want decimal text with two places in COP", inv.RentalPrice, inv.Currency)
		}
		if inv.IsSigned != (inv.ApprovalCode != nil) || inv.IsSigned != (inv.SignatureDate != nil) {
			t.Errorf("inventory %s: signed %v with approval code %v and signature date %v", inv.ID, inv.IsSigned, inv.ApprovalCode, inv.SignatureDate)
		}
		if len(inv.Environments) < datagen.Demo.MinEnvironments {
			t.Errorf("inventory %s: %d environments, want at least %d", inv.ID, len(inv.Environments), datagen.Demo.MinEnvironments)
		}
		for i, env := range inv.Environments {
			if env.Order != i {
				t.Errorf("environment %q: order %d at position %d: want inventory order", env.Name, env.Order, i)
			}
			if env.Level < 1 || env.Level > inv.Property.Levels {
				t.Errorf("environment %q: level %d outside 1..%d", env.Name, env.Level, inv.Property.Levels)
			}
			if len(env.Items) == 0 {
				t.Errorf("environment %q has no items", env.Name)
			}
			for j, it := range env.Items {
				if it.Material.Name == "" || it.Rating < 1 || it.Rating > 5 {
					t.Errorf("item %s: material %q rating %d", it.ID, it.Material.Name, it.Rating)
				}
				if j > 0 && it.Order != nil && env.Items[j-1].Order == nil {
					t.Errorf("item %s: ordered item after an unordered one: want unordered last", it.ID)
				}
				for _, p := range it.Photos {
					if !strings.HasSuffix(p.StorageReference, ".jpg") {
						t.Errorf("photo reference %q: want an image file name", p.StorageReference)
					}
				}
			}
		}
	}
}

func TestInventoryTypeCodesAndNames(t *testing.T) {
	srv, _ := demo(t)
	var got connection
	srv.MustData(t, companyA, `{ inventories(first: 100) { edges { node { inventoryType inventoryTypeCode inventoryTypeName } } } }`, nil, &got)
	want := map[string]struct {
		code int
		name string
	}{"CAPTACION": {0, "captación"}, "COLOCACION": {1, "colocación"}, "PRE_VISITA": {2, "pre-visita"}, "DESOCUPACION": {3, "desocupación"}}
	seen := map[string]bool{}
	for _, e := range got.Inventories.Edges {
		n := e.Node
		w, ok := want[n.InventoryType]
		if !ok || w.code != n.InventoryTypeCode || w.name != n.InventoryTypeName {
			t.Errorf("type %s: got code %d name %q, want %d %q", n.InventoryType, n.InventoryTypeCode, n.InventoryTypeName, w.code, w.name)
		}
		seen[n.InventoryType] = true
	}
	if len(seen) != 4 {
		t.Errorf("types seen: got %v, want all four", seen)
	}
}

func TestFiltersAndOrdering(t *testing.T) {
	srv, _ := demo(t)
	query := `query($where: InventoryWhereInput, $order: InventoryOrder) {
		inventories(first: 100, where: $where, orderBy: $order) { totalCount edges { node {
			id inventoryType isSigned isRemoteSigned rentalPrice createdAt signatureDate property { id city } } } } }`
	// inOrder reports whether b may follow a in the requested order.
	type inOrder func(a, b inventoryTree) bool
	tests := []struct {
		name    string
		where   map[string]any
		order   map[string]any
		check   func(n inventoryTree) bool
		inOrder inOrder
	}{
		{"signed colocación", map[string]any{"isSigned": true, "inventoryType": "COLOCACION"}, nil,
			func(n inventoryTree) bool { return n.IsSigned && n.InventoryType == "COLOCACION" }, nil},
		{"unsigned", map[string]any{"isSigned": false}, nil,
			func(n inventoryTree) bool { return !n.IsSigned && n.SignatureDate == nil }, nil},
		{"remote-signed", map[string]any{"isRemoteSigned": true}, nil,
			func(n inventoryTree) bool { return n.IsRemoteSigned && n.IsSigned }, nil},
		{"signed on site", map[string]any{"isRemoteSigned": false, "isSigned": true}, nil,
			func(n inventoryTree) bool { return !n.IsRemoteSigned && n.IsSigned }, nil},
		{"created in 2024", map[string]any{"createdAtGTE": "2024-01-01T00:00:00Z", "createdAtLT": "2025-01-01T00:00:00Z"}, nil,
			func(n inventoryTree) bool { return n.CreatedAt >= "2024" && n.CreatedAt < "2025" }, nil},
		{"offset timestamps compare in UTC", map[string]any{"createdAtGTE": "2023-12-31T19:00:00-05:00"}, nil,
			func(n inventoryTree) bool { return n.CreatedAt >= "2024" }, nil},
		{"signed in 2024", map[string]any{"signatureDateGTE": "2024-01-01T00:00:00Z", "signatureDateLT": "2025-01-01T00:00:00Z"}, nil,
			func(n inventoryTree) bool {
				return n.SignatureDate != nil && *n.SignatureDate >= "2024" && *n.SignatureDate < "2025"
			}, nil},
		{"city", map[string]any{"hasPropertyWith": []any{map[string]any{"city": "Bogotá"}}}, nil,
			func(n inventoryTree) bool { return n.Property.City == "Bogotá" }, nil},
		{"by price, ascending", nil, map[string]any{"field": "RENTAL_PRICE", "direction": "ASC"}, nil,
			func(a, b inventoryTree) bool { return !lessDecimal(b.RentalPrice, a.RentalPrice) }},
		{"by price, descending", nil, map[string]any{"field": "RENTAL_PRICE", "direction": "DESC"}, nil,
			func(a, b inventoryTree) bool { return !lessDecimal(a.RentalPrice, b.RentalPrice) }},
		{"by creation date, ascending", nil, map[string]any{"field": "CREATED_AT", "direction": "ASC"}, nil,
			func(a, b inventoryTree) bool { return a.CreatedAt <= b.CreatedAt }},
		{"by creation date, descending", nil, map[string]any{"field": "CREATED_AT", "direction": "DESC"}, nil,
			func(a, b inventoryTree) bool { return a.CreatedAt >= b.CreatedAt }},
		{"by type, ascending", nil, map[string]any{"field": "INVENTORY_TYPE", "direction": "ASC"}, nil,
			func(a, b inventoryTree) bool { return typeCode[a.InventoryType] <= typeCode[b.InventoryType] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got connection
			srv.MustData(t, companyA, query, map[string]any{"where": tt.where, "order": tt.order}, &got)
			edges := got.Inventories.Edges
			if len(edges) == 0 || len(edges) != got.Inventories.TotalCount {
				t.Fatalf("got %d edges of %d: want a non-empty, complete list", len(edges), got.Inventories.TotalCount)
			}
			if tt.where != nil && got.Inventories.TotalCount == 60 {
				t.Errorf("filter kept all 60 inventories")
			}
			for i, e := range edges {
				if tt.check != nil && !tt.check(e.Node) {
					t.Errorf("%+v does not match the filter", e.Node)
				}
				if tt.inOrder != nil && i > 0 && !tt.inOrder(edges[i-1].Node, e.Node) {
					t.Errorf("%+v\nafter %+v: want %v", e.Node, edges[i-1].Node, tt.order)
				}
			}
		})
	}
	t.Run("property", func(t *testing.T) {
		var all connection
		srv.MustData(t, companyA, query, nil, &all)
		property := all.Inventories.Edges[0].Node.Property.ID
		var got connection
		srv.MustData(t, companyA, query, map[string]any{"where": map[string]any{"propertyID": property}}, &got)
		if got.Inventories.TotalCount != datagen.Demo.InventoriesPerProperty {
			t.Errorf("inventories of property %s: got %d, want %d", property, got.Inventories.TotalCount, datagen.Demo.InventoriesPerProperty)
		}
	})
}

// typeCode orders the InventoryType enum by its stable code.
var typeCode = map[string]int{"CAPTACION": 0, "COLOCACION": 1, "PRE_VISITA": 2, "DESOCUPACION": 3}

// lessDecimal compares non-negative decimal texts with two places.
func lessDecimal(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

type page struct {
	Data []struct {
		ID            string  `json:"id"`
		SignatureDate *string `json:"signatureDate"`
	} `json:"data"`
	Page            int  `json:"page"`
	PageSize        int  `json:"pageSize"`
	TotalRecords    int  `json:"totalRecords"`
	TotalPages      int  `json:"totalPages"`
	HasPreviousPage bool `json:"hasPreviousPage"`
	HasNextPage     bool `json:"hasNextPage"`
}

const inventoryPageQuery = `query($page: Int!, $size: Int!, $where: InventoryWhereInput, $order: InventoryOrder) {
	inventoryPage(page: $page, pageSize: $size, where: $where, orderBy: $order) {
		data { id signatureDate } page pageSize totalRecords totalPages hasPreviousPage hasNextPage } }`

func TestInventoryPageFollowsPagingRule(t *testing.T) {
	srv, _ := demo(t)
	var first struct{ InventoryPage page }
	srv.MustData(t, companyA, inventoryPageQuery, map[string]any{"page": 1, "size": 20, "where": map[string]any{"inventoryTypeIn": []string{"CAPTACION", "COLOCACION", "PRE_VISITA", "DESOCUPACION"}}}, &first)
	got := first.InventoryPage
	// The spec's own example: page 1 of 60 records at 20 a page.
	if got.Page != 1 || got.PageSize != 20 || got.TotalRecords != 60 || got.TotalPages != 3 || got.HasPreviousPage || !got.HasNextPage || len(got.Data) != 20 {
		t.Errorf("page 1: got %+v (%d rows), want page 1 of 3, 60 records, no previous, a next, 20 rows", got, len(got.Data))
	}

	var past struct{ InventoryPage page }
	srv.MustData(t, companyA, inventoryPageQuery, map[string]any{"page": 9, "size": 20}, &past)
	if p := past.InventoryPage; len(p.Data) != 0 || p.TotalRecords != 60 || p.TotalPages != 3 || !p.HasPreviousPage || p.HasNextPage {
		t.Errorf("page past the end: got %+v (%d rows), want empty with true metadata", p, len(p.Data))
	}
}

// signatureOrder checks rows sorted by signature date: signed ones in the
// direction asked, unsigned ones after them in either direction.
func signatureOrder(t *testing.T, direction string, dates []*string) {
	t.Helper()
	for i := 1; i < len(dates); i++ {
		prev, cur := dates[i-1], dates[i]
		switch {
		case prev == nil && cur != nil:
			t.Errorf("%s: signed after unsigned at %d: want unsigned last", direction, i)
		case prev != nil && cur != nil && direction == "ASC" && *cur < *prev,
			prev != nil && cur != nil && direction == "DESC" && *cur > *prev:
			t.Errorf("%s: %s then %s at %d", direction, *prev, *cur, i)
		}
	}
}

func TestInventoryPageWalkHoldsEveryRecordOnce(t *testing.T) {
	srv, _ := demo(t)
	for _, order := range []map[string]any{
		nil,
		{"field": "SIGNATURE_DATE", "direction": "DESC"},
		{"field": "SIGNATURE_DATE", "direction": "ASC"},
		{"field": "RENTAL_PRICE", "direction": "ASC"},
	} {
		var ids []string
		var dates []*string
		for p := 1; ; p++ {
			var got struct{ InventoryPage page }
			srv.MustData(t, companyA, inventoryPageQuery, map[string]any{"page": p, "size": 7, "order": order}, &got)
			for _, row := range got.InventoryPage.Data {
				ids = append(ids, row.ID)
				dates = append(dates, row.SignatureDate)
			}
			if !got.InventoryPage.HasNextPage {
				if got.InventoryPage.TotalPages != p {
					t.Errorf("order %v: last page %d, totalPages %d", order, p, got.InventoryPage.TotalPages)
				}
				break
			}
		}
		everyRecordOnce(t, fmt.Sprintf("pages by %v", order), ids, 60)
		if order != nil && order["field"] == "SIGNATURE_DATE" {
			signatureOrder(t, order["direction"].(string), dates)
		}
	}
}

func everyRecordOnce(t *testing.T, walk string, ids []string, want int) {
	t.Helper()
	sorted := slices.Clone(ids)
	sort.Strings(sorted)
	if distinct := len(slices.Compact(sorted)); len(ids) != want || distinct != want {
		t.Errorf("%s: %d rows, %d distinct: want each of %d once", walk, len(ids), distinct, want)
	}
}

func TestCursorWalkHoldsEveryRecordOnce(t *testing.T) {
	srv, _ := demo(t)
	query := `query($after: Cursor, $order: InventoryOrder) {
		inventories(first: 9, after: $after, orderBy: $order) {
			edges { node { id signatureDate } } pageInfo { hasNextPage endCursor } } }`
	for _, order := range []map[string]any{
		{"field": "SIGNATURE_DATE", "direction": "DESC"},
		{"field": "SIGNATURE_DATE", "direction": "ASC"},
		{"field": "CREATED_AT", "direction": "DESC"},
		{"field": "RENTAL_PRICE", "direction": "ASC"},
		{"field": "INVENTORY_TYPE", "direction": "DESC"},
	} {
		var ids []string
		var dates []*string
		var after any
		for {
			var got struct {
				Inventories struct {
					Edges []struct {
						Node struct {
							ID            string  `json:"id"`
							SignatureDate *string `json:"signatureDate"`
						} `json:"node"`
					} `json:"edges"`
					PageInfo struct {
						HasNextPage bool   `json:"hasNextPage"`
						EndCursor   string `json:"endCursor"`
					} `json:"pageInfo"`
				} `json:"inventories"`
			}
			srv.MustData(t, companyA, query, map[string]any{"after": after, "order": order}, &got)
			for _, e := range got.Inventories.Edges {
				ids = append(ids, e.Node.ID)
				dates = append(dates, e.Node.SignatureDate)
			}
			if !got.Inventories.PageInfo.HasNextPage || len(ids) > 100 {
				break
			}
			after = got.Inventories.PageInfo.EndCursor
		}
		everyRecordOnce(t, fmt.Sprintf("cursors by %v", order), ids, 60)
		if order["field"] == "SIGNATURE_DATE" {
			signatureOrder(t, order["direction"].(string), dates)
		}
		// Backwards with last and before: the same rows, in reverse.
		var back []string
		var before any
		for {
			var got struct {
				Inventories struct {
					Edges []struct {
						Node struct{ ID string } `json:"node"`
					} `json:"edges"`
					PageInfo struct {
						HasPreviousPage bool   `json:"hasPreviousPage"`
						StartCursor     string `json:"startCursor"`
					} `json:"pageInfo"`
				} `json:"inventories"`
			}
			srv.MustData(t, companyA, `query($before: Cursor, $order: InventoryOrder) {
				inventories(last: 9, before: $before, orderBy: $order) {
					edges { node { id } } pageInfo { hasPreviousPage startCursor } } }`,
				map[string]any{"before": before, "order": order}, &got)
			for i := len(got.Inventories.Edges) - 1; i >= 0; i-- {
				back = append(back, got.Inventories.Edges[i].Node.ID)
			}
			if !got.Inventories.PageInfo.HasPreviousPage || len(back) > 100 {
				break
			}
			before = got.Inventories.PageInfo.StartCursor
		}
		slices.Reverse(back)
		if !slices.Equal(back, ids) {
			t.Errorf("cursors by %v: the walk backwards holds %d rows in another order than the %d forwards", order, len(back), len(ids))
		}
	}

	// A property's inventories, eager-loaded under the page of properties.
	for _, direction := range []string{"ASC", "DESC"} {
		var got struct {
			Properties struct {
				Edges []struct {
					Node struct {
						Inventories struct {
							Edges []struct {
								Node struct {
									SignatureDate *string `json:"signatureDate"`
								} `json:"node"`
							} `json:"edges"`
						} `json:"inventories"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"properties"`
		}
		srv.MustData(t, companyA, `query($direction: OrderDirection!) { properties(first: 20) { edges { node {
			inventories(orderBy: {field: SIGNATURE_DATE, direction: $direction}) { edges { node { signatureDate } } } } } } }`,
			map[string]any{"direction": direction}, &got)
		mixed := 0
		for _, p := range got.Properties.Edges {
			var dates []*string
			for _, e := range p.Node.Inventories.Edges {
				dates = append(dates, e.Node.SignatureDate)
			}
			if slices.Contains(dates, nil) && slices.ContainsFunc(dates, func(d *string) bool { return d != nil }) {
				mixed++
			}
			signatureOrder(t, direction, dates)
		}
		if mixed == 0 {
			t.Fatalf("%s: no property has signed and unsigned inventories: the nested order is not tested", direction)
		}
	}
	// Without an orderBy, newest first, as the schema says.
	var newest struct {
		Properties struct {
			Edges []struct {
				Node struct {
					Inventories struct {
						Edges []struct {
							Node struct {
								CreatedAt string `json:"createdAt"`
							} `json:"node"`
						} `json:"edges"`
					} `json:"inventories"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"properties"`
	}
	srv.MustData(t, companyA, `{ properties(first: 20) { edges { node { inventories { edges { node { createdAt } } } } } } }`, nil, &newest)
	for _, p := range newest.Properties.Edges {
		edges := p.Node.Inventories.Edges
		for i := 1; i < len(edges); i++ {
			if edges[i].Node.CreatedAt > edges[i-1].Node.CreatedAt {
				t.Errorf("a property's inventories without orderBy: %s after %s, want newest first", edges[i].Node.CreatedAt, edges[i-1].Node.CreatedAt)
			}
		}
	}

	// Some demo properties have an empty code: a zero value in the cursor.
	var ids []string
	var after any
	for len(ids) <= 40 {
		var got struct {
			Properties struct {
				Edges []struct {
					Node struct{ ID string } `json:"node"`
				} `json:"edges"`
				PageInfo struct {
					HasNextPage bool   `json:"hasNextPage"`
					EndCursor   string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"properties"`
		}
		srv.MustData(t, companyA, `query($after: Cursor) { properties(first: 2, after: $after, orderBy: {field: CODE, direction: ASC}) {
			edges { node { id } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"after": after}, &got)
		for _, e := range got.Properties.Edges {
			ids = append(ids, e.Node.ID)
		}
		if !got.Properties.PageInfo.HasNextPage {
			break
		}
		after = got.Properties.PageInfo.EndCursor
	}
	everyRecordOnce(t, "properties by code", ids, 20)

	res := srv.GraphQL(t, companyA, `{ inventories(first: 1, after: "bm90IGEgY3Vyc29y") { totalCount } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" {
		t.Errorf("forged cursor: got %+v, want INVALID_ARGUMENT", res.Errors)
	}
}

func TestPagingArgumentsAreValidated(t *testing.T) {
	srv, _ := demo(t)
	for _, tt := range []struct {
		vars  map[string]any
		field string
	}{
		{map[string]any{"page": 0, "size": 20}, "page"},
		{map[string]any{"page": 1, "size": 0}, "pageSize"},
		{map[string]any{"page": 1, "size": 101}, "pageSize"},
	} {
		res := srv.GraphQL(t, companyA, inventoryPageQuery, tt.vars)
		if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" || res.Errors[0].Extensions["field"] != tt.field {
			t.Errorf("%v: got errors %+v, want one INVALID_ARGUMENT on %s", tt.vars, res.Errors, tt.field)
		}
	}
	res := srv.GraphQL(t, companyA, `{ inventories(first: 1000) { totalCount } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" {
		t.Errorf("first: 1000: got %+v, want INVALID_ARGUMENT", res.Errors)
	}
	res = srv.GraphQL(t, companyA, `{ inventories(where: {createdAtGTE: "yesterday"}) { totalCount } }`, nil)
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "RFC 3339") {
		t.Errorf("bad timestamp: got %+v, want an error naming RFC 3339", res.Errors)
	}
	// Each id of nodes is a bound parameter: a request may not name more
	// than a page's worth, however large the body.
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	res = srv.GraphQL(t, companyA, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" || res.Errors[0].Extensions["field"] != "ids" {
		t.Errorf("nodes of 101 ids: got %d errors, first %+v, want one INVALID_ARGUMENT on ids", len(res.Errors), res.Errors[0])
	}
	res = srv.GraphQL(t, companyA, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids[:100]})
	if want := `{"nodes":[null` + strings.Repeat(",null", 99) + `]}`; string(res.Data) != want || len(res.Errors) != 0 {
		t.Errorf("nodes of 100 unknown ids: got %.80s… and %d errors, want 100 nulls and no error (Relay)", res.Data, len(res.Errors))
	}
}

func TestPropertyPage(t *testing.T) {
	srv, _ := demo(t)
	var got struct {
		PropertyPage struct {
			Data []struct {
				ID          string `json:"id"`
				CreatedAt   string `json:"createdAt"`
				Inventories struct {
					Edges []struct {
						Node struct {
							ID string `json:"id"`
						} `json:"node"`
					} `json:"edges"`
				} `json:"inventories"`
			} `json:"data"`
			TotalRecords int  `json:"totalRecords"`
			TotalPages   int  `json:"totalPages"`
			HasNextPage  bool `json:"hasNextPage"`
		} `json:"propertyPage"`
	}
	srv.MustData(t, companyB, `{ propertyPage(page: 1, pageSize: 15, orderBy: {field: CREATED_AT, direction: ASC}) {
		data { id createdAt inventories { edges { node { id } } } } totalRecords totalPages hasNextPage } }`, nil, &got)
	p := got.PropertyPage
	if p.TotalRecords != 20 || p.TotalPages != 2 || !p.HasNextPage || len(p.Data) != 15 {
		t.Errorf("got %d of %d records in %d pages (next %v), want 15 of 20 in 2", len(p.Data), p.TotalRecords, p.TotalPages, p.HasNextPage)
	}
	for i, prop := range p.Data {
		if i > 0 && prop.CreatedAt < p.Data[i-1].CreatedAt {
			t.Errorf("createdAt %s before %s: want ascending", prop.CreatedAt, p.Data[i-1].CreatedAt)
		}
		if len(prop.Inventories.Edges) != datagen.Demo.InventoriesPerProperty {
			t.Errorf("property %s: %d inventories, want %d", prop.ID, len(prop.Inventories.Edges), datagen.Demo.InventoriesPerProperty)
		}
	}
}

func TestCompanyHeaderIsRequired(t *testing.T) {
	srv, _ := demo(t)
	for _, tt := range []struct{ header, code string }{
		{"", "UNAUTHENTICATED"},
		{"not-a-uuid", "INVALID_ARGUMENT"},
	} {
		res := srv.GraphQL(t, tt.header, `{ inventories { totalCount } }`, nil)
		if len(res.Errors) != 1 || res.Errors[0].Code() != tt.code || res.Errors[0].Extensions["field"] != "X-Company-Id" {
			t.Errorf("header %q: got %+v, want one %s error on X-Company-Id", tt.header, res.Errors, tt.code)
		}
	}
	// The header sent twice naming two companies (a gateway that appends its
	// header to the client's) is refused, not read as the first one.
	res, body := srv.Get(t, "/graphql?query="+url.QueryEscape(`{ inventories { totalCount } }`),
		http.Header{"X-Company-Id": {companyB, companyA}})
	var twice apitest.Response
	if err := json.Unmarshal(body, &twice); err != nil || len(twice.Errors) != 1 || twice.Errors[0].Code() != "INVALID_ARGUMENT" {
		t.Errorf("X-Company-Id sent twice, naming two companies: got %d %s, want one INVALID_ARGUMENT", res.StatusCode, body)
	}
	// Without a company, node answers the same for an existing record (of
	// any company, or the shared material catalogue) as for an unknown id:
	// it must not tell which ids exist.
	_, list := records(t, srv, companyA)
	inventory := list.Inventories.Edges[0].Node
	for _, id := range []string{inventory.ID, inventory.Environments[0].Items[0].Material.ID, uuid.NewString()} {
		res := srv.GraphQL(t, "", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
		if string(res.Data) != `{"node":null}` || len(res.Errors) != 1 || res.Errors[0].Code() != "UNAUTHENTICATED" {
			t.Errorf("node %s without a company: got %s %+v, want null and UNAUTHENTICATED", id, res.Data, res.Errors)
		}
	}
	var schema struct {
		Schema struct {
			QueryType struct{ Name string } `json:"queryType"`
		} `json:"__schema"`
	}
	srv.MustData(t, "", `{ __schema { queryType { name } } }`, nil, &schema)
	if schema.Schema.QueryType.Name != "Query" {
		t.Errorf("introspection without a company: got %+v, want the schema", schema)
	}
}

func TestUnknownCompanySeesNothing(t *testing.T) {
	srv, _ := demo(t)
	var got struct {
		Inventories struct{ TotalCount int } `json:"inventories"`
		Properties  struct{ TotalCount int } `json:"properties"`
	}
	srv.MustData(t, uuid.NewString(), `{ inventories { totalCount } properties { totalCount } }`, nil, &got)
	if got.Inventories.TotalCount != 0 || got.Properties.TotalCount != 0 {
		t.Errorf("unknown company: got %+v, want nothing", got)
	}
}

func TestInternalErrorsAreNotShown(t *testing.T) {
	srv, st := demo(t)
	st.Close() // every statement now fails inside the driver
	res := srv.GraphQL(t, companyA, `{ inventories { totalCount } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Message != "internal error" || res.Errors[0].Code() != "INTERNAL" {
		t.Errorf("got %+v, want one INTERNAL error saying only \"internal error\"", res.Errors)
	}
}

func TestOversizedRequestsAreRefused(t *testing.T) {
	srv, _ := demo(t)
	body := `{"query": "{ __typename }", "padding": "` + strings.Repeat("x", graphqlhttp.MaxRequestBytes) + `"}`
	res, err := http.Post(srv.URL+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode < 400 || res.StatusCode >= 500 {
		b, _ := io.ReadAll(res.Body)
		t.Errorf("a body over %d bytes: got %d %s, want a 4xx", graphqlhttp.MaxRequestBytes, res.StatusCode, b)
	}
}

// TestPanicsAreRecoveredAndNotShown serves without a file store, so that
// Photo.url panics on a nil store: the client gets INTERNAL "internal error",
// the log gets the panic, and the server goes on serving.
func TestPanicsAreRecoveredAndNotShown(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	var logs strings.Builder
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	hs := httptest.NewServer(server.Handler(st, log, server.Options{RESTBaseURL: rest.DefaultBaseURL}))
	t.Cleanup(hs.Close)
	srv := &apitest.Server{URL: hs.URL}

	res := srv.GraphQL(t, companyA, `{ inventories(first: 1) { edges { node { environments { items { photos { url } } } } } } }`, nil)
	if len(res.Errors) == 0 || res.Errors[0].Message != "internal error" || res.Errors[0].Code() != "INTERNAL" {
		t.Errorf("a panicking resolver: got %+v, want INTERNAL \"internal error\"", res.Errors)
	}
	if !strings.Contains(logs.String(), `"msg":"graphql: panic"`) {
		t.Errorf("the panic was not logged:\n%s", logs.String())
	}
	var after struct{ Inventories struct{ TotalCount int } }
	srv.MustData(t, companyA, `{ inventories { totalCount } }`, nil, &after)
	if after.Inventories.TotalCount != 60 {
		t.Errorf("after the panic: got %d inventories, want 60", after.Inventories.TotalCount)
	}
}
