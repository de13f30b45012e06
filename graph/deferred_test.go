package graph_test

import (
	"encoding/json"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
)

// inventoryTypeName has a resolver: gqlgen defers only such fields, and
// answers plain ones (currency) at once, which the spec allows.
const deferred = `{ inventories(first: 2) { edges { node { id ... @defer { inventoryTypeName } } } } }`

// @defer works as Apollo Client and urql send it: a POST accepting
// multipart/mixed gets the answer in parts, the deferred fields in a later
// one, and the last part says nothing follows. Sent any other way, it is
// refused with an error that says how to send it, rather than answered with
// the first part alone and a promise (hasNext) never kept.
func TestDeferIsDeliveredInPartsOrRefused(t *testing.T) {
	srv, _ := demo(t)

	req, err := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"`+deferred+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824, application/json")
	req.Header.Set("X-Company-Id", companyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	parts := string(body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "multipart/mixed") ||
		!strings.Contains(parts, `"hasNext":true`) || !strings.Contains(parts, `"incremental"`) ||
		strings.Count(parts, `"data":{"inventoryTypeName":"`) != 2 || !strings.Contains(parts, `"hasNext":false`) || strings.Contains(parts, `"errors"`) {
		t.Errorf("@defer over multipart/mixed: got %d %s:\n%q\nwant a first part, the deferred fields of both in later ones, and a last part", res.StatusCode, res.Header.Get("Content-Type"), parts)
	}

	refused := func(how string, res apitest.Response) {
		t.Helper()
		if string(res.Data) != "" && string(res.Data) != "null" || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "multipart/mixed") {
			t.Errorf("@defer over %s: got %s %+v, want one error saying to accept multipart/mixed", how, res.Data, res.Errors)
		}
	}
	refused("a JSON POST", srv.GraphQL(t, companyA, deferred, nil))
	getRes, getBody := srv.Get(t, "/graphql?query="+url.QueryEscape(deferred), http.Header{"X-Company-Id": {companyA}})
	var got apitest.Response
	if err := json.Unmarshal(getBody, &got); err != nil {
		t.Fatalf("GET: %d %s: %v", getRes.StatusCode, getBody, err)
	}
	refused("GET without multipart/mixed", got)

	// urql sends queries with GET by default, accepting multipart/mixed:
	// the same parts. A mutation sent so is refused, as any GET's is.
	accept := http.Header{"X-Company-Id": {companyA}, "Accept": {"multipart/mixed;deferSpec=20220824, application/json"}}
	getRes, getBody = srv.Get(t, "/graphql?query="+url.QueryEscape(deferred)+"&variables=%7B%7D", accept)
	parts = string(getBody)
	if getRes.StatusCode != http.StatusOK || !strings.HasPrefix(getRes.Header.Get("Content-Type"), "multipart/mixed") ||
		strings.Count(parts, `"data":{"inventoryTypeName":"`) != 2 || !strings.Contains(parts, `"hasNext":false`) || strings.Contains(parts, `"errors"`) {
		t.Errorf("@defer over GET accepting multipart/mixed: got %d %s:\n%q", getRes.StatusCode, getRes.Header.Get("Content-Type"), parts)
	}
	mutation := `mutation { removeItemPhoto(photoId: "00000000-0000-0000-0000-000000000001") { photoId } }`
	getRes, getBody = srv.Get(t, "/graphql?query="+url.QueryEscape(mutation), accept)
	if !strings.Contains(string(getBody), "GET requests only allow query operations") || strings.Contains(string(getBody), "photoId\":") {
		t.Errorf("a mutation over GET accepting multipart/mixed: %d %s; want it refused", getRes.StatusCode, getBody)
	}
	getRes, getBody = srv.Get(t, "/graphql?query="+url.QueryEscape(deferred)+"&variables=%7Bnot", accept)
	if getRes.StatusCode != http.StatusBadRequest || !strings.Contains(string(getBody), "variables in the URL is not JSON") {
		t.Errorf("bad variables over GET: %d %s; want 400 saying so", getRes.StatusCode, getBody)
	}
}

// The fields a part defers are absent from the parts before it, not null
// (a null in property: Property! reads to Apollo Client as the answer),
// and arrive in a later part, as the incremental delivery proposal has it.
func TestDeferredFieldsAreAbsentUntilTheirPart(t *testing.T) {
	srv, _ := demo(t)
	query := `{ inventories(first: 2) { edges { node { id currency ... @defer { inventoryTypeName property { address } } } } } }`
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"`+query+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824, application/json")
	req.Header.Set("X-Company-Id", companyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, params, err := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		t.Fatalf("%d %s: not multipart (%v)", res.StatusCode, res.Header.Get("Content-Type"), err)
	}
	var payloads []map[string]json.RawMessage
	parts := multipart.NewReader(res.Body, params["boundary"])
	for {
		part, err := parts.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var payload map[string]json.RawMessage
		if err := json.NewDecoder(part).Decode(&payload); err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, payload)
	}
	if len(payloads) < 2 {
		t.Fatalf("%d parts, want the first and the deferred ones", len(payloads))
	}
	var first struct {
		Inventories struct {
			Edges []struct{ Node map[string]json.RawMessage }
		}
	}
	if err := json.Unmarshal(payloads[0]["data"], &first); err != nil || len(first.Inventories.Edges) != 2 {
		t.Fatalf("the first part: %s (%v)", payloads[0]["data"], err)
	}
	for _, e := range first.Inventories.Edges {
		keys := slices.Sorted(maps.Keys(e.Node))
		if !slices.Equal(keys, []string{"currency", "id"}) {
			t.Errorf("a node of the first part has %v, want id and currency alone (the deferred fields absent): %s", keys, payloads[0]["data"])
		}
	}
	later := 0
	for _, p := range payloads[1:] {
		var parts []struct {
			Data struct {
				InventoryTypeName *string
				Property          *struct{ Address string }
			}
		}
		if err := json.Unmarshal(p["incremental"], &parts); err != nil {
			t.Fatal(err)
		}
		for _, part := range parts {
			if part.Data.InventoryTypeName == nil || part.Data.Property == nil || part.Data.Property.Address == "" {
				t.Errorf("a deferred part: %s, want both deferred fields", p["incremental"])
			}
			later++
		}
	}
	if later != 2 {
		t.Errorf("%d deferred parts, want one for each node", later)
	}
}
