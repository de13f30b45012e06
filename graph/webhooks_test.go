package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

const webhookFields = `id url events description enabled disabledReason previousSecretExpiresAt createdAt updatedAt`

// The webhook endpoints through GraphQL: made, changed, rotated and
// deleted with a write key only, the secret shown once, and one company
// never reaching another's.
func TestWebhookEndpointsThroughGraphQL(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	keys := auth.NewKeys(st.Client)
	ctx := context.Background()
	reader, _, err := keys.Create(ctx, datagen.DemoCompanies[0], "report", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	writerA, _, err := keys.Create(ctx, datagen.DemoCompanies[0], "pms", auth.ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	writerB, _, err := keys.Create(ctx, datagen.DemoCompanies[1], "pms-b", auth.ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Auth: auth.APIKey, Verifier: keys})
	call := func(key, query string, vars map[string]any) apitest.Response {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var answer apitest.Response
		if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
			t.Fatal(err)
		}
		return answer
	}
	code := func(r apitest.Response) string {
		if len(r.Errors) != 1 {
			return ""
		}
		return r.Errors[0].Code()
	}
	const create = `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { ` + webhookFields + ` } } }`
	input := map[string]any{"url": "https://pms.example/hooks", "events": []string{"FULLY_SIGNED", "PDF_READY"}, "description": "legacy PMS"}
	if r := call(reader, create, map[string]any{"input": input}); code(r) != "FORBIDDEN" {
		t.Errorf("createWebhookEndpoint with a read key: %+v; want FORBIDDEN", r)
	}
	r := call(writerA, create, map[string]any{"input": map[string]any{"url": "http://pms.example/hooks", "events": []string{"FULLY_SIGNED"}}})
	if code(r) != "INVALID_ARGUMENT" || r.Errors[0].Extensions["field"] != "url" {
		t.Errorf("an http URL: %+v; want INVALID_ARGUMENT on url", r)
	}
	r = call(writerA, create, map[string]any{"input": input})
	if len(r.Errors) > 0 {
		t.Fatalf("createWebhookEndpoint: %+v", r.Errors)
	}
	var made struct {
		CreateWebhookEndpoint struct {
			Secret   string
			Endpoint struct {
				ID      string
				URL     string
				Events  []string
				Enabled bool
			}
		}
	}
	if err := json.Unmarshal(r.Data, &made); err != nil {
		t.Fatal(err)
	}
	ep := made.CreateWebhookEndpoint
	if !strings.HasPrefix(ep.Secret, "whsec_") || len(ep.Secret) < len("whsec_")+32 || !ep.Endpoint.Enabled ||
		ep.Endpoint.URL != "https://pms.example/hooks" || len(ep.Endpoint.Events) != 2 {
		t.Errorf("made: %s", r.Data)
	}
	const list = `{ webhookEndpoints { ` + webhookFields + ` } }`
	if r := call(reader, list, nil); len(r.Errors) > 0 || !strings.Contains(string(r.Data), ep.Endpoint.ID) || strings.Contains(string(r.Data), "whsec_") {
		t.Errorf("webhookEndpoints with a read key: %s %+v; want the endpoint, no secret", r.Data, r.Errors)
	}
	if r := call(writerB, list, nil); len(r.Errors) > 0 || strings.Contains(string(r.Data), ep.Endpoint.ID) {
		t.Errorf("webhookEndpoints of another company: %s %+v; want none of A's", r.Data, r.Errors)
	}
	const update = `mutation($input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(input: $input) { ` + webhookFields + ` } }`
	change := map[string]any{"input": map[string]any{"id": ep.Endpoint.ID, "enabled": false, "events": []string{"INVENTORY_CREATED"}}}
	if r := call(writerB, update, change); code(r) != "NOT_FOUND" {
		t.Errorf("updateWebhookEndpoint of another company's: %+v; want NOT_FOUND", r)
	}
	if r := call(writerA, update, change); len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"enabled":false`) ||
		!strings.Contains(string(r.Data), `"events":["INVENTORY_CREATED"]`) {
		t.Errorf("updateWebhookEndpoint: %s %+v", r.Data, r.Errors)
	}
	const rotate = `mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret endpoint { previousSecretExpiresAt } } }`
	if r := call(writerB, rotate, map[string]any{"id": ep.Endpoint.ID}); code(r) != "NOT_FOUND" {
		t.Errorf("rotateWebhookSecret of another company's: %+v; want NOT_FOUND", r)
	}
	r = call(writerA, rotate, map[string]any{"id": ep.Endpoint.ID})
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), "whsec_") || strings.Contains(string(r.Data), ep.Secret) ||
		strings.Contains(string(r.Data), `"previousSecretExpiresAt":null`) {
		t.Errorf("rotateWebhookSecret: %s %+v; want a new secret and the old one's end", r.Data, r.Errors)
	}
	const deliveries = `query($id: ID!) { webhookDeliveries(endpointId: $id, first: 5) { hasNextPage endCursor deliveries { id status attempts { at statusCode latencyMs response error } } } }`
	if r := call(reader, deliveries, map[string]any{"id": ep.Endpoint.ID}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"deliveries":[]`) {
		t.Errorf("webhookDeliveries: %s %+v", r.Data, r.Errors)
	}
	const remove = `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { deleted } }`
	if r := call(writerB, remove, map[string]any{"id": ep.Endpoint.ID}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"deleted":false`) {
		t.Errorf("deleteWebhookEndpoint of another company's: %s %+v; want deleted false", r.Data, r.Errors)
	}
	if r := call(writerA, remove, map[string]any{"id": ep.Endpoint.ID}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"deleted":true`) {
		t.Errorf("deleteWebhookEndpoint: %s %+v", r.Data, r.Errors)
	}
	if r := call(reader, list, nil); len(r.Errors) > 0 || strings.Contains(string(r.Data), ep.Endpoint.ID) {
		t.Errorf("webhookEndpoints after the delete: %s", r.Data)
	}
}
