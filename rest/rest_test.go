package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

var (
	companyA = datagen.DemoCompanies[0].String()
	companyB = datagen.DemoCompanies[1].String()
)

// api is the real server with a dataset, and the OpenAPI document it serves,
// against which every response of these tests is validated.
type api struct {
	*apitest.Server
	doc    *openapi3.T
	router routers.Router
}

// serve loads a dataset (with its files when withFiles) and serves it. The
// demo size is copied from the one testdb loads once per test process.
func serve(t testing.TB, size datagen.Size, withFiles bool, opts ...store.Option) *api {
	t.Helper()
	fs := apitest.Files(t)
	var st *store.Store
	switch {
	case size == datagen.Demo && withFiles:
		st = testdb.DemoWithFiles.Open(t, fs, opts...)
	case size == datagen.Demo:
		st = testdb.DemoRecords.Open(t, opts...)
	default:
		st = testdb.Open(t, opts...)
		var written *files.Store
		if withFiles {
			written = fs
		}
		if _, err := datagen.Load(context.Background(), st.Client, written, datagen.DemoSeed, size); err != nil {
			t.Fatal(err)
		}
	}
	return withDocument(t, apitest.NewServer(t, st, fs))
}

// withDocument loads the OpenAPI document srv serves, against which the
// responses of call are validated.
func withDocument(t testing.TB, srv *apitest.Server) *api {
	t.Helper()
	res, raw := srv.Get(t, "/openapi.json", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/openapi.json: %d", res.StatusCode)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("loading /openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("/openapi.json is not a valid OpenAPI document: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: srv.URL}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &api{Server: srv, doc: doc, router: router}
}

func demo(t testing.TB) *api { return serve(t, datagen.Demo, false) }

// demoWithFiles is demo with every PDF and photo stored.
func demoWithFiles(t testing.TB) *api { return serve(t, datagen.Demo, true) }

type response struct {
	status int
	header http.Header
	body   []byte
}

// call sends a request and validates the response against the
// OpenAPI document: status, headers and body schema.
func (a *api) call(t testing.TB, method, path string, header http.Header) response {
	t.Helper()
	req, err := http.NewRequest(method, a.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		// HEAD has no body; the document has GET operations only, and
		// validateError checks the 405s other methods get.
		return response{status: res.StatusCode, header: res.Header, body: body}
	}
	route, pathParams, err := a.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: no route in /openapi.json: %v", method, path, err)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route},
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			// Files (PDFs, photos) are checked by their own tests; the document gives their media type.
			ExcludeResponseBody: !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json")},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		t.Errorf("%s %s: response does not match /openapi.json: %v\n%s", method, path, err, body)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func (a *api) get(t testing.TB, path string) response {
	t.Helper()
	return a.call(t, http.MethodGet, path, nil)
}

// getJSON expects 200 and decodes the body into out.
func (a *api) getJSON(t testing.TB, path string, out any) {
	t.Helper()
	res := a.get(t, path)
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", path, res.status, res.body)
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, res.body)
	}
}

// validateError checks a response the document's operations do not cover (a
// 405) against its Error schema.
func (a *api) validateError(t testing.TB, res response) {
	t.Helper()
	var body any
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Errorf("error body %s: %v", res.body, err)
		return
	}
	if err := a.doc.Components.Schemas["Error"].Value.VisitJSON(body); err != nil {
		t.Errorf("error body %s does not match the Error schema: %v", res.body, err)
	}
}

// errorOf decodes a REST error body.
func errorOf(t testing.TB, res response) (code, parameter string) {
	t.Helper()
	var body struct {
		Success bool
		Error   struct{ Code, Parameter, Message string }
	}
	if err := json.Unmarshal(res.body, &body); err != nil || body.Success || body.Error.Message == "" {
		t.Errorf("error body %s: want success false with a message", res.body)
	}
	return body.Error.Code, body.Error.Parameter
}

func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}
