package graph_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/rest"
)

// fuzzOperations are the operations whose variables FuzzGraphQLVariables
// fuzzes: every root list with its filter, order, size and cursor, a numbered
// page, node lookups and a nested tree whose sizes are variables.
var fuzzOperations = []string{
	`query Inventories($where: InventoryWhereInput, $orderBy: InventoryOrder, $first: Int, $after: Cursor, $last: Int, $before: Cursor) {
		inventories(where: $where, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
			totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
			edges { cursor node { id inventoryType rentalPrice isSigned createdAt signatureDate approvalCode } }
		}
	}`,
	`query Properties($where: PropertyWhereInput, $orderBy: PropertyOrder, $first: Int, $after: Cursor, $n: Int!, $inner: InventoryWhereInput) {
		properties(where: $where, orderBy: $orderBy, first: $first, after: $after) {
			totalCount edges { cursor node { id code city levels createdAt inventories(first: $n, where: $inner) { totalCount edges { node { id } } } } }
		}
	}`,
	`query Page($page: Int!, $pageSize: Int!, $where: InventoryWhereInput, $orderBy: InventoryOrder) {
		inventoryPage(page: $page, pageSize: $pageSize, where: $where, orderBy: $orderBy) {
			page pageSize totalRecords totalPages hasPreviousPage hasNextPage data { id inventoryTypeName pdfUrl }
		}
	}`,
	`query PropertyPage($page: Int!, $pageSize: Int!, $where: PropertyWhereInput, $orderBy: PropertyOrder) {
		propertyPage(page: $page, pageSize: $pageSize, where: $where, orderBy: $orderBy) { totalRecords data { id city } }
	}`,
	`query Nodes($id: ID!, $ids: [ID!]!) {
		node(id: $id) { __typename id ... on Inventory { isSigned } ... on Item { name photos { url } } ... on Property { city } }
		nodes(ids: $ids) { __typename id }
	}`,
	`query Tree($first: Int, $envs: Int!, $items: Int!, $photos: Int!, $materialItems: Int!, $itemWhere: ItemWhereInput) {
		inventories(first: $first) { edges { node { id environments(first: $envs) { name items(first: $items) {
			name rating photos(first: $photos) { url } material { name items(first: $materialItems, where: $itemWhere) { totalCount } }
		} } } } }
	}`,
	`mutation Create($input: CreateInventoryInput!) {
		createInventory(input: $input) { inventory { id version environments { id items { id rating material { name } } } } }
	}`,
	`mutation Update($input: UpdateInventoryInput!) {
		updateInventory(input: $input) { inventory { id version rentalPrice environments { items { id photos { url } } } } }
	}`,
}

// Modes of a fuzzed GraphQL call, as bits.
const (
	fuzzGET           = 1 << iota // GET with the operation in the query string, rather than POST
	fuzzCompanyB                  // as company B rather than A
	fuzzNoCompany                 // without X-Company-Id
	fuzzGarbageHeader             // with an X-Company-Id that is not a UUID
)

// fuzzServer is the real handler over httptest on the test database with
// the demo data, its ERROR log lines kept.
type fuzzServer struct {
	url  string
	logs apitest.LogBuffer
}

// FuzzGraphQLVariables runs fixed operations with fuzzed variables: the
// variables' JSON is sent as it is, valid or not. Whatever it holds, the
// answer is a client's: below 500, a JSON GraphQL response, no INTERNAL code,
// nothing logged as ERROR.
func FuzzGraphQLVariables(f *testing.F) {
	st := testdb.DemoRecords.Open(f)
	s := &fuzzServer{}
	srv := httptest.NewServer(server.Handler(st, s.logs.Logger(slog.LevelError), server.Options{Files: apitest.Files(f), RESTBaseURL: rest.DefaultBaseURL}))
	f.Cleanup(srv.Close)
	s.url = srv.URL

	// Real ids and cursors, so that seeds get past validation.
	var data struct {
		Inventories struct {
			Edges []struct {
				Cursor string
				Node   struct {
					ID       string
					Property struct{ ID string }
				}
			}
		}
	}
	(&apitest.Server{URL: srv.URL}).MustData(f, companyA, `{ inventories(first: 2) { edges { cursor node { id property { id } } } } }`, nil, &data)
	var materials struct {
		Inventories struct {
			Edges []struct {
				Node struct {
					Environments []struct {
						Items []struct{ Material struct{ ID string } }
					}
				}
			}
		}
	}
	(&apitest.Server{URL: srv.URL}).MustData(f, companyA, `{ inventories(first: 1) { edges { node { environments { items { material { id } } } } } } }`, nil, &materials)
	material := materials.Inventories.Edges[0].Node.Environments[0].Items[0].Material.ID
	if len(data.Inventories.Edges) < 2 {
		f.Fatal("want 2 inventories in the demo data")
	}
	inventory, property := data.Inventories.Edges[0].Node.ID, data.Inventories.Edges[0].Node.Property.ID
	cursor := data.Inventories.Edges[1].Cursor
	raw, _ := base64.RawStdEncoding.DecodeString(cursor)
	damaged := base64.RawStdEncoding.EncodeToString(append(raw[:len(raw)/2:len(raw)/2], 0xc1, 0xff))

	const (
		inventories, properties, page, propertyPage, nodes, tree, create, update = 0, 1, 2, 3, 4, 5, 6, 7
		get, asB, none, garbage                                                  = fuzzGET, fuzzCompanyB, fuzzNoCompany, fuzzGarbageHeader
	)
	q := strconv.Quote
	for _, seed := range []struct {
		op   uint8
		vars string
		mode uint8
	}{
		// Valid variables, which reach the database.
		{inventories, `{"first": 5, "where": {"isSigned": true}, "orderBy": {"field": "SIGNATURE_DATE", "direction": "DESC"}}`, 0},
		{inventories, `{"first": 3, "after": ` + q(cursor) + `}`, 0},
		{inventories, `{"last": 3, "before": ` + q(cursor) + `, "orderBy": {"field": "RENTAL_PRICE"}}`, get},
		{inventories, `{"where": {"propertyID": ` + q(property) + `, "inventoryTypeIn": ["CAPTACION", "DESOCUPACION"], "createdAtGT": "2020-01-01T00:00:00Z"}}`, asB},
		{inventories, `{"where": {"hasPropertyWith": [{"cityContainsFold": "bogot"}], "or": [{"isSigned": true}, {"approvalCodeIsNil": true}]}}`, 0},
		{properties, `{"first": 2, "n": 3, "where": {"levelsGTE": 1, "hasInventories": true}, "orderBy": {"field": "CITY", "direction": "ASC"}}`, 0},
		{page, `{"page": 2, "pageSize": 20, "where": {"isSigned": false}, "orderBy": {"field": "CREATED_AT", "direction": "DESC"}}`, 0},
		{propertyPage, `{"page": 1, "pageSize": 100}`, get},
		{nodes, `{"id": ` + q(inventory) + `, "ids": [` + q(inventory) + `, ` + q(property) + `]}`, 0},
		{tree, `{"first": 2, "envs": 60, "items": 200, "photos": 20, "materialItems": 100}`, 0},
		// Sizes out of their bounds, huge and not whole numbers.
		{inventories, `{"first": 2147483647}`, 0},
		{inventories, `{"first": 2147483648}`, 0},
		{inventories, `{"first": -1, "last": -1}`, 0},
		{inventories, `{"first": 1e400}`, 0},
		{inventories, `{"first": 1.5}`, 0},
		{inventories, `{"first": "10"}`, 0},
		{page, `{"page": 2147483647, "pageSize": 100}`, 0},
		{page, `{"page": 0, "pageSize": 0}`, 0},
		{page, `{"page": -9223372036854775809, "pageSize": 99999999999999999999}`, 0},
		{tree, `{"first": 100, "envs": 61, "items": 201, "photos": 21, "materialItems": 101}`, 0},
		{tree, `{"first": null, "envs": null, "items": 0, "photos": -1, "materialItems": 0}`, 0},
		// Cursors that are damaged or not cursors.
		{inventories, `{"first": 3, "after": ` + q(damaged) + `}`, 0},
		{inventories, `{"first": 3, "after": "AAAA", "before": "////"}`, 0},
		{inventories, `{"first": 3, "after": "gqFpxBA7EO4F0jRC1LGDJG8IPFrIoXbA", "orderBy": {"field": "SIGNATURE_DATE"}}`, 0},
		{inventories, `{"first": 3, "after": 5}`, 0},
		{properties, `{"n": 1, "after": ` + q(cursor) + `}`, 0},
		// Found by fuzzing: a msgpack map whose key "v" comes twice, first
		// with bytes, panics msgpack (reflect.Value.SetBytes using
		// unaddressable value) while the cursor is read.
		{inventories, `{"first":0,"after":"gqF2xBA000000000000000000000oXbA"}`, 0},
		{inventories, `{"first":1,"after":"gqF2xAJhYqF2wA"}`, 0},
		// Filters known to reach SQL badly: empty ones, NUL bytes, lists
		// past the parameter limit, thousands of alternatives.
		{inventories, `{"where": {"not": {}}}`, 0},
		{inventories, `{"where": {"or": [{"signatureDateIsNil": false}]}}`, 0},
		{properties, `{"n": 1, "where": {"hasInventoriesWith": [{"ownerSignatureDateIsNil": false}]}}`, 0},
		{properties, `{"n": 1, "where": {"cityContains": "a\u0000b"}}`, 0},
		{inventories, `{"where": {"currencyIn": ["\u0000"], "approvalCodeHasPrefix": "\u0000"}}`, 0},
		{properties, `{"n": 1, "where": {"levelsIn": [` + strings.TrimSuffix(strings.Repeat("1,", 70_000), ",") + `]}}`, 0},
		{inventories, `{"where": {"or": [` + strings.TrimSuffix(strings.Repeat(`{"isSigned": true},`, 3000), ",") + `]}}`, 0},
		{inventories, `{"where": ` + strings.Repeat(`{"not": `, 500) + `{"isSigned": true}` + strings.Repeat("}", 500) + `}`, 0},
		{tree, `{"first": 1, "envs": 1, "items": 1, "photos": 1, "materialItems": 1, "itemWhere": {"not": {}, "nameContains": "\u0000"}}`, 0},
		// Variables of the wrong types, unknown, missing, or not an object.
		{inventories, `{"where": 5, "orderBy": {"field": "NOPE"}}`, 0},
		{inventories, `{"where": {"isSigned": "yes", "unknown": 1}}`, 0},
		{inventories, `{"orderBy": {"direction": "SIDEWAYS", "field": "CREATED_AT"}}`, 0},
		{inventories, `{"where": {"createdAtGT": "not a time", "inventoryType": 3}}`, 0},
		{nodes, `{"id": null, "ids": null}`, 0},
		{nodes, `{"ids": [` + q(inventory) + `]}`, 0},
		{nodes, `{"id": ["x"], "ids": "x"}`, 0},
		{page, `[]`, 0},
		{page, `"x"`, 0},
		{page, `null`, 0},
		{page, `{"page": 1, "page": "two", "pageSize": 1}`, 0},
		// JSON that does not decode.
		{inventories, `{`, 0},
		{inventories, `{"first": 1`, get},
		{inventories, `{"first": 01}`, 0},
		{inventories, `{"where": {"isSigned": tru}}`, 0},
		{inventories, "{\"where\": {\"currency\": \"\xff\xfe\"}}", 0},
		{inventories, `{"where": {"currency": "\ud800"}}`, 0},
		{inventories, strings.Repeat("[", 100_000), 0},
		// Unicode, very long strings, each company header.
		{inventories, `{"where": {"currencyContainsFold": "🏠\u202e", "approvalCodeEqualFold": "İ"}}`, asB},
		{properties, `{"n": 1, "where": {"address": "` + strings.Repeat("x", 200_000) + `"}}`, 0},
		{nodes, `{"id": ` + q(inventory) + `, "ids": []}`, none},
		{nodes, `{"id": ` + q(inventory) + `, "ids": []}`, garbage},
		{inventories, `{"first": 1}`, get | garbage},
		// Writes: a tree (sent again by every run: the same answer), malformed
		// trees, another company's property, huge and fake values, a signed
		// or stale update, and a mutation sent with GET.
		{create, `{"input": {"id": "7a1d5e1c-2f7b-4c1e-9d3a-5b6c7d8e9f01", "propertyId": ` + q(property) + `, "inventoryType": "CAPTACION", "rentalPrice": "1500000.00",
			"environments": [{"name": "Sala", "items": [{"name": "Piso", "materialId": ` + q(material) + `, "rating": 4}]}]}}`, 0},
		{create, `{"input": {"propertyId": ` + q(property) + `, "inventoryType": "CAPTACION", "rentalPrice": "1"}}`, asB},
		{create, `{"input": {"propertyId": ` + q(property) + `, "inventoryType": 2, "rentalPrice": 1500000, "environments": [{"name": null}]}}`, 0},
		{create, `{"input": {"propertyId": ` + q(property) + `, "inventoryType": "CAPTACION", "rentalPrice": "1e400", "currency": "\u0000",
			"environments": [{"name": "\u0000", "level": 2147483648, "items": [{"name": "x", "materialId": "x", "rating": -9223372036854775809, "order": 1.5}]}]}}`, 0},
		{create, `{"input": {"propertyId": ` + q(property) + `, "inventoryType": "CAPTACION", "rentalPrice": "1", "environments": [` +
			strings.TrimSuffix(strings.Repeat(`{"name": "Sala", "items": [{"name": "Piso", "materialId": `+q(material)+`, "rating": 3}]},`, 61), ",") + `]}}`, 0},
		{create, `{"input": {"propertyId": ` + q(inventory) + `, "inventoryType": "CAPTACION", "rentalPrice": "1", "environments": [{"name": "` + strings.Repeat("x", 100_000) + `"}]}}`, 0},
		{create, `{"input": null}`, none},
		{update, `{"input": {"id": ` + q(inventory) + `, "expectedVersion": 1, "rentalPrice": "1.00", "environments": []}}`, 0},
		{update, `{"input": {"id": ` + q(inventory) + `, "expectedVersion": 2147483648, "environments": [{"id": ` + q(property) + `, "name": "x"}]}}`, asB},
		{update, `{"input": {"id": ` + q(inventory) + `, "expectedVersion": 1}}`, get},
	} {
		f.Add(seed.op, seed.vars, seed.mode)
	}

	// An answer this long after the request deadline is a hang, reported
	// as the input that caused it.
	client := &http.Client{Timeout: server.DefaultRequestTimeout + 20*time.Second}
	f.Fuzz(func(t *testing.T, op uint8, variables string, mode uint8) {
		document := fuzzOperations[int(op)%len(fuzzOperations)]
		var req *http.Request
		if mode&fuzzGET != 0 {
			query := "query=" + url.QueryEscape(document) + "&variables=" + url.QueryEscape(variables)
			req, _ = http.NewRequest(http.MethodGet, s.url+"/graphql?"+query, nil)
		} else {
			// The variables go in as they are: JSON that does not decode
			// is the client's error to be told about.
			body := `{"query":` + strconv.Quote(document) + `,"variables":` + variables + `}`
			req, _ = http.NewRequest(http.MethodPost, s.url+"/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		switch {
		case mode&fuzzGarbageHeader != 0:
			req.Header.Set("X-Company-Id", companyA+";")
		case mode&fuzzNoCompany != 0:
		case mode&fuzzCompanyB != 0:
			req.Header.Set("X-Company-Id", companyB)
		default:
			req.Header.Set("X-Company-Id", companyA)
		}
		before := len(s.logs.ErrorLines())
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s with variables %s: no answer (a panic, or the connection closed): %v", req.Method, fuzzClip(variables), err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s with variables %s: the answer was cut: %v", req.Method, fuzzClip(variables), err)
		}
		name, _, _ := strings.Cut(strings.Fields(document)[1], "(")
		if problem := fuzzJudgeGraphQL(res, body); problem != "" {
			t.Errorf("%s %s with variables %s: %s\n%d %s", req.Method, name, fuzzClip(variables), problem, res.StatusCode, fuzzClip(string(body)))
		}
		if logged := s.logs.ErrorLines()[before:]; len(logged) > 0 {
			for i, l := range logged {
				logged[i] = fuzzClip(l) // a panic's line holds its whole stack
			}
			t.Errorf("%s %s with variables %s: the server logged ERROR: %s", req.Method, name, fuzzClip(variables), strings.Join(logged, "\n"))
		}
	})
}

// fuzzJudgeGraphQL returns what is wrong with a GraphQL answer, or "".
func fuzzJudgeGraphQL(res *http.Response, body []byte) string {
	if res.StatusCode >= 500 {
		// 503 UNAVAILABLE and 504 DEADLINE_EXCEEDED are documented, but
		// nothing here makes the database busy or a request slow.
		return "a server error"
	}
	var answer struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&answer); err != nil || dec.More() || answer.Data == nil && answer.Errors == nil {
		return "a body that is not a JSON GraphQL response"
	}
	for _, e := range answer.Errors {
		var gqlErr struct {
			Message    string
			Extensions struct{ Code string }
		}
		if err := json.Unmarshal(e, &gqlErr); err != nil || gqlErr.Message == "" {
			return "an error without a message"
		}
		if gqlErr.Extensions.Code == "INTERNAL" {
			return "an INTERNAL error"
		}
	}
	return ""
}

func fuzzClip(s string) string {
	if len(s) > 400 {
		return strconv.Quote(s[:400]) + "..."
	}
	return strconv.Quote(s)
}
