package graph_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
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
	refused("GET", got)
}
