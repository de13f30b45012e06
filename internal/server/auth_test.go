package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// records are one company's records that the endpoints look up by id.
type records struct {
	company, inventory, property, item uuid.UUID
}

func recordsOf(t *testing.T, st *store.Store, company uuid.UUID) records {
	t.Helper()
	ctx := tenant.WithCompany(context.Background(), company)
	inv, err := st.Client.Inventory.Query().Where(inventory.IsSigned(true)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := st.Client.Item.Query().Where(item.HasPhotos()).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return records{company: company, inventory: inv.ID, property: inv.PropertyID, item: it.ID}
}

// endpoint is one of the eight REST endpoints, asking for r's records.
type endpoint struct {
	name string
	path func(r records) string
}

var restEndpoints = []endpoint{
	{"A1", func(r records) string { return "/inventory/detail/" + r.inventory.String() }},
	{"A2", func(r records) string { return files.PDFPath + r.inventory.String() }},
	{"A3", func(r records) string { return "/inventory/download-photos/itemDiagnostic/" + r.item.String() }},
	{"A4", func(r records) string { return "/property/get_properties/" + r.company.String() + "?page=1&sorter=asc" }},
	{"A5", func(r records) string { return "/property/get_property_uuid/" + r.property.String() }},
	{"B1", func(records) string { return "/api/v1/inventories" }},
	{"B2", func(r records) string { return "/api/v1/inventories/details?InventoryId=" + r.inventory.String() }},
	{"B3", func(r records) string { return "/api/v1/inventories/by-property?propertyId=" + r.property.String() }},
}

// request makes a request with header and returns its status, headers and body.
func request(t *testing.T, method, url string, header http.Header, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if header != nil {
		req.Header = header.Clone()
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return res.StatusCode, res.Header, buf.Bytes()
}

func bearer(credential string) http.Header {
	return http.Header{"Authorization": {"Bearer " + credential}}
}

// nodeQuery asks GraphQL for one record by id.
func nodeQuery(id uuid.UUID) []byte {
	body, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { node(id: $id) { id } }`, "variables": map[string]any{"id": id}})
	return body
}

// credentialsBindTheCompany runs the checks both credential modes share:
// own's credential reads own's records on every endpoint and GraphQL, and
// none of other's; naming another company is refused; no credential is a 401.
func credentialsBindTheCompany(t *testing.T, srv *apitest.Server, own, other records, credential http.Header) {
	t.Helper()
	for _, e := range restEndpoints {
		if status, header, body := request(t, http.MethodGet, srv.URL+e.path(own), nil, nil); status != http.StatusUnauthorized ||
			!strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(string(body), `"UNAUTHENTICATED"`) {
			t.Errorf("%s without a credential: %d %q %s, want 401 with a Bearer challenge", e.name, status, header.Get("WWW-Authenticate"), body)
		}
		if status, _, body := request(t, http.MethodGet, srv.URL+e.path(own), credential, nil); status != http.StatusOK {
			t.Errorf("%s on its own records: %d %.200s, want 200", e.name, status, body)
		}
		status, _, body := request(t, http.MethodGet, srv.URL+e.path(other), credential, nil)
		switch e.name {
		case "A4":
			if status != http.StatusForbidden {
				t.Errorf("A4 with another company's id: %d %.200s, want 403", status, body)
			}
		case "B1":
			// B1 names no record: it lists the caller's own.
			if status != http.StatusOK || strings.Contains(string(body), other.inventory.String()) {
				t.Errorf("%s: %d, or another company's inventory in %.300s", e.name, status, body)
			}
		default:
			if status != http.StatusNotFound {
				t.Errorf("%s on another company's record: %d %.200s, want 404 as for a missing one", e.name, status, body)
			}
		}
		naming := credential.Clone()
		naming.Set(tenant.Header, other.company.String())
		if status, _, body := request(t, http.MethodGet, srv.URL+e.path(own), naming, nil); status != http.StatusForbidden {
			t.Errorf("%s naming another company in X-Company-Id: %d %.200s, want 403", e.name, status, body)
		}
		sep := "?"
		if strings.Contains(e.path(own), "?") {
			sep = "&"
		}
		if status, _, body := request(t, http.MethodGet, srv.URL+e.path(own)+sep+"x-company-id="+other.company.String(), credential, nil); status != http.StatusForbidden {
			t.Errorf("%s naming another company in x-company-id: %d %.200s, want 403", e.name, status, body)
		}
	}

	status, _, body := request(t, http.MethodPost, srv.URL+"/graphql", credential, nodeQuery(own.inventory))
	if status != http.StatusOK || !strings.Contains(string(body), own.inventory.String()) {
		t.Errorf("GraphQL node of its own inventory: %d %s", status, body)
	}
	status, _, body = request(t, http.MethodPost, srv.URL+"/graphql", credential, nodeQuery(other.inventory))
	if status != http.StatusOK || !strings.HasPrefix(string(body), `{"data":{"node":null}`) {
		t.Errorf("GraphQL node of another company's inventory: %d %s, want null as for a missing one", status, body)
	}
	status, header, body := request(t, http.MethodPost, srv.URL+"/graphql", nil, nodeQuery(own.inventory))
	if status != http.StatusUnauthorized || header.Get("WWW-Authenticate") == "" || !strings.Contains(string(body), `"code":"UNAUTHENTICATED"`) {
		t.Errorf("GraphQL without a credential: %d %s, want 401 with a GraphQL error", status, body)
	}
	naming := credential.Clone()
	naming.Set(tenant.Header, other.company.String())
	if status, _, body := request(t, http.MethodPost, srv.URL+"/graphql", naming, nodeQuery(other.inventory)); status != http.StatusForbidden ||
		!strings.Contains(string(body), `"code":"FORBIDDEN"`) {
		t.Errorf("GraphQL naming another company: %d %s, want 403", status, body)
	}
	for _, open := range []string{"/healthz", "/readyz", "/", "/openapi.json"} {
		if status, _, _ := request(t, http.MethodGet, srv.URL+open, nil, nil); status != http.StatusOK {
			t.Errorf("%s without a credential: %d, want 200 (open)", open, status)
		}
	}
}

// smallDataset has, for each demo company, signed inventories and items
// with photos: what the endpoints are asked for, at a tenth of the demo.
var smallDataset = datagen.Size{Companies: 2, PropertiesPerCompany: 3, InventoriesPerProperty: 2,
	MinEnvironments: 1, MaxEnvironments: 2, MinItems: 1, MaxItems: 3, MaxPhotos: 2}

func demoStore(t *testing.T) (*store.Store, *files.Store, records, records) {
	t.Helper()
	st := testdb.Open(t)
	fs := apitest.Files(t)
	ctx := tenant.Unrestricted(context.Background(), "test: demo data")
	if _, err := datagen.Load(ctx, st.Client, fs, datagen.DemoSeed, smallDataset); err != nil {
		t.Fatal(err)
	}
	return st, fs, recordsOf(t, st, datagen.DemoCompanies[0]), recordsOf(t, st, datagen.DemoCompanies[1])
}

func TestAPIKeysBindTheCallerToItsCompany(t *testing.T) {
	st, fs, a, b := demoStore(t)
	keys := auth.NewKeys(st.Client)
	ctx := context.Background()
	keyA, _, err := keys.Create(ctx, a.company, "app-a", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := keys.Create(ctx, b.company, "app-a", auth.ScopeRead); err == nil {
		t.Errorf("a second key named app-a: want an error, names are unique")
	}
	var logs apitest.LogBuffer
	srv := apitest.NewServerLogging(t, st, server.Options{Files: fs, Auth: auth.APIKey, Verifier: keys}, logs.Logger(0))
	credentialsBindTheCompany(t, srv, a, b, bearer(keyA))

	if status, _, body := request(t, http.MethodGet, srv.URL+"/inventory/detail/"+a.inventory.String(), http.Header{"X-Api-Key": {keyA}}, nil); status != http.StatusOK {
		t.Errorf("the key in X-Api-Key: %d %s, want 200", status, body)
	}
	// last_used_at is written after the request, in the background.
	var listed []*ent.APIKey
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if listed, err = keys.List(ctx, a.company); err != nil || len(listed) == 1 && listed[0].LastUsedAt != nil {
			break
		}
	}
	if err != nil || len(listed) != 1 || listed[0].LastUsedAt == nil || listed[0].Hash == keyA {
		t.Errorf("listing A's keys: %+v, %v: want one, used, stored as a hash", listed, err)
	}
	if _, _, err := keys.Create(ctx, a.company, uuid.NewString(), auth.ScopeRead); err == nil {
		t.Errorf("a key named like a UUID: want an error (revoke would read the name as an id)")
	}
	// No spelling of a path reaches a closed endpoint through an open one.
	for _, path := range []string{"//graphql", "/healthz/../graphql", "/ide/../graphql", "/ide/%2e%2e/graphql",
		"/files/photos/..%2F..%2Fgraphql", "/openapi.json/../api/v1/inventories"} {
		status, _, body := request(t, http.MethodPost, srv.URL+path, nil, nodeQuery(a.inventory))
		if status == http.StatusOK || strings.Contains(string(body), a.inventory.String()) {
			t.Errorf("POST %s without a credential: %d %.200s", path, status, body)
		}
	}
	underOpen := apitest.NewServerWith(t, st, server.Options{Files: fs, Auth: auth.APIKey, Verifier: keys, RESTBaseURL: files.PhotoPath + "x"})
	if status, _, body := request(t, http.MethodGet, underOpen.URL+files.PhotoPath+"x/inventories?x-company-id="+a.company.String(), nil, nil); status != http.StatusUnauthorized {
		t.Errorf("B1 under the photos' open prefix without a credential: %d %.200s, want 401", status, body)
	}
	if _, err := keys.Revoke(ctx, "app-a"); err != nil {
		t.Fatal(err)
	}
	for _, credential := range []string{keyA, "ik_" + strings.Repeat("A", 43), "not-a-key"} {
		status, header, body := request(t, http.MethodGet, srv.URL+"/inventory/detail/"+a.inventory.String(), bearer(credential), nil)
		if status != http.StatusUnauthorized || !strings.Contains(header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("key %.10s…: %d %s, want 401 invalid_token", credential, status, body)
		}
	}
	// The IDE opens with an Authorization header to paste the key into.
	if status, _, page := request(t, http.MethodGet, srv.URL+"/", nil, nil); status != http.StatusOK ||
		!strings.Contains(string(page), "Authorization") || strings.Contains(string(page), a.company.String()) {
		t.Errorf("the IDE page in apikey mode: %d, want an Authorization header to fill in and no company", status)
	}

	// The OpenAPI document declares the mode's schemes, and only those.
	status, _, doc := request(t, http.MethodGet, srv.URL+"/openapi.json", nil, nil)
	loaded, err := openapi3.NewLoader().LoadFromData(doc)
	if status != http.StatusOK || err != nil {
		t.Fatalf("/openapi.json: %d, %v", status, err)
	}
	if err := loaded.Validate(ctx); err != nil {
		t.Errorf("/openapi.json in apikey mode is not valid: %v", err)
	}
	schemes := loaded.Components.SecuritySchemes
	if schemes["bearer"] == nil || schemes["apiKeyHeader"] == nil || schemes["companyHeader"] != nil ||
		strings.Contains(string(doc), "companyHeader") || !strings.Contains(string(doc), `"bearer": []`) {
		t.Errorf("/openapi.json in apikey mode: schemes %v, want bearer and apiKeyHeader required by the operations", schemes)
	}

	lines := logs.String()
	if !strings.Contains(lines, `"msg":"auth: refused"`) || !strings.Contains(lines, `"caller":"app-a"`) || !strings.Contains(lines, `"remote_addr":"127.0.0.1`) {
		t.Errorf("refusals are not logged with the caller and its address:\n%.2000s", lines)
	}
}

// issuerKeys is an issuer's JWKS endpoint, whose keys can rotate.
type issuerKeys struct {
	mu   sync.Mutex
	keys map[string]*rsa.PrivateKey
}

func (i *issuerKeys) set(keys map[string]*rsa.PrivateKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys = keys
}

// serve serves the public halves of the keys as a JWKS.
func (i *issuerKeys) serve(t *testing.T) string {
	t.Helper()
	enc := base64.RawURLEncoding
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i.mu.Lock()
		var keys []any
		for kid, key := range i.keys {
			keys = append(keys, map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": enc.EncodeToString(key.N.Bytes()), "e": enc.EncodeToString(big.NewInt(int64(key.E)).Bytes())})
		}
		i.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestOpenIDConnectTokensBindTheCallerToItsCompany(t *testing.T) {
	st, fs, a, b := demoStore(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	issuer := &issuerKeys{keys: map[string]*rsa.PrivateKey{"k1": key}}
	verifier, err := auth.NewJWT(ctx, auth.JWTOptions{JWKSURL: issuer.serve(t), Issuer: "https://id.example.com",
		Audience: "inventory", CompanyClaim: "company_id", Skew: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: fs, Auth: auth.JWT, Verifier: verifier})
	token := func(signer *rsa.PrivateKey, change func(jwt.MapClaims)) string {
		return signed(t, signer, "k1", a.company, change)
	}
	credentialsBindTheCompany(t, srv, a, b, bearer(token(key, nil)))

	// A token writes when its scope claim says so ("scope", space-separated,
	// or "scp", a list); one that says nothing reads only.
	create := `mutation($p: ID!) { createInventory(input: {propertyId: $p, inventoryType: CAPTACION, rentalPrice: "1500000", currency: "COP"}) { inventory { id } } }`
	for name, tc := range map[string]struct {
		change func(jwt.MapClaims)
		want   string
	}{
		"no scope":         {nil, "FORBIDDEN"},
		"scope read":       {func(c jwt.MapClaims) { c["scope"] = "openid read" }, "FORBIDDEN"},
		"scope read write": {func(c jwt.MapClaims) { c["scope"] = "openid read write" }, ""},
		"scp [write]":      {func(c jwt.MapClaims) { c["scp"] = []string{"write"} }, ""},
	} {
		status, _, body := request(t, http.MethodPost, srv.URL+"/graphql", bearer(token(key, tc.change)),
			[]byte(`{"query":`+strconv.Quote(create)+`,"variables":{"p":"`+a.property.String()+`"}}`))
		got := ""
		if m := regexp.MustCompile(`"code":"([A-Z_]+)"`).FindSubmatch(body); m != nil {
			got = string(m[1])
		}
		if status != http.StatusOK || got != tc.want || tc.want == "" && !strings.Contains(string(body), `"createInventory":{"inventory":{"id"`) {
			t.Errorf("a token with %s: %d %s; want code %q", name, status, body, tc.want)
		}
	}

	// The issuer rotates in a new key: the first token signed with it makes
	// the service fetch the keys again, at once.
	rotated, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	issuer.set(map[string]*rsa.PrivateKey{"k1": key, "k2": rotated})
	if status, _, body := request(t, http.MethodGet, srv.URL+"/inventory/detail/"+a.inventory.String(),
		bearer(signed(t, rotated, "k2", a.company, nil)), nil); status != http.StatusOK {
		t.Errorf("a token signed with a key just rotated in: %d %s, want 200", status, body)
	}

	for name, bad := range map[string]string{
		"expired":        token(key, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() }),
		"without exp":    token(key, func(c jwt.MapClaims) { delete(c, "exp") }),
		"wrong audience": token(key, func(c jwt.MapClaims) { c["aud"] = "another-api" }),
		"wrong issuer":   token(key, func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" }),
		"badly signed":   token(forger, nil),
		"no company":     token(key, func(c jwt.MapClaims) { delete(c, "company_id") }),
		"not a company":  token(key, func(c jwt.MapClaims) { c["company_id"] = "acme" }),
		"nil company":    token(key, func(c jwt.MapClaims) { c["company_id"] = uuid.Nil.String() }),
		"unsigned":       unsignedToken(t),
	} {
		status, header, body := request(t, http.MethodGet, srv.URL+"/inventory/detail/"+a.inventory.String(), bearer(bad), nil)
		if status != http.StatusUnauthorized || !strings.Contains(header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s token: %d %s, want 401 invalid_token", name, status, body)
		}
	}
}

// signed is a token of company for user-1, signed by signer under kid, as
// change alters its claims.
func signed(t *testing.T, signer *rsa.PrivateKey, kid string, company uuid.UUID, change func(jwt.MapClaims)) string {
	t.Helper()
	claims := jwt.MapClaims{"iss": "https://id.example.com", "aud": "inventory", "sub": "user-1",
		"company_id": company.String(), "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	if change != nil {
		change(claims)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	out, err := tok.SignedString(signer)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func unsignedToken(t *testing.T) string {
	t.Helper()
	signed, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": "https://id.example.com", "aud": "inventory",
		"company_id": datagen.DemoCompanies[0].String(), "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// A caller beyond its rate gets 429 with Retry-After; another caller is not
// slowed by it.
func TestCallersBeyondTheirRateAreToldToWait(t *testing.T) {
	st := testdb.Open(t)
	keys := auth.NewKeys(st.Client)
	company := uuid.New()
	keyA, _, err := keys.Create(context.Background(), company, "busy", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	keyB, _, err := keys.Create(context.Background(), company, "calm", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Auth: auth.APIKey, Verifier: keys,
		Limiter: auth.NewLimiter(0.5, 3)})
	var limited int
	for range 6 {
		status, header, body := request(t, http.MethodGet, srv.URL+"/api/v1/inventories", bearer(keyA), nil)
		switch {
		case status == http.StatusTooManyRequests && header.Get("Retry-After") != "" && strings.Contains(string(body), `"RATE_LIMITED"`):
			limited++
		case status != http.StatusOK:
			t.Errorf("busy caller: %d %s", status, body)
		}
	}
	if limited != 3 {
		t.Errorf("6 requests at once with a burst of 3: %d refused with Retry-After, want 3", limited)
	}
	if status, _, body := request(t, http.MethodGet, srv.URL+"/api/v1/inventories", bearer(keyB), nil); status != http.StatusOK {
		t.Errorf("another caller: %d %s, want 200", status, body)
	}

	// An address that keeps sending bad credentials is told to wait, before
	// any is checked.
	var refused []int
	for i := range 5 {
		status, _, _ := request(t, http.MethodGet, srv.URL+"/api/v1/inventories", bearer(fmt.Sprintf("ik_guess%d", i)), nil)
		refused = append(refused, status)
	}
	if !slices.Equal(refused, []int{401, 401, 401, 429, 429}) {
		t.Errorf("5 bad credentials with a burst of 3: %v, want 3 refusals then 429s", refused)
	}

	// In header mode, when a rate is set, the caller is its address.
	byAddress := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Limiter: auth.NewLimiter(0.5, 2)})
	header := http.Header{tenant.Header: {company.String()}}
	var statuses []int
	for range 3 {
		status, _, _ := request(t, http.MethodGet, byAddress.URL+"/api/v1/inventories", header, nil)
		statuses = append(statuses, status)
	}
	if statuses[0] != http.StatusOK || statuses[1] != http.StatusOK || statuses[2] != http.StatusTooManyRequests {
		t.Errorf("header mode, a burst of 2: statuses %v, want 200, 200, 429", statuses)
	}
}
