package rest_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/rest"
)

// The demo data's companies (declared apart from the other tests' names).
var (
	fuzzCompanyA = datagen.DemoCompanies[0].String()
	fuzzCompanyB = datagen.DemoCompanies[1].String()
)

// fuzzServer is the real handler over httptest on the test database with
// the demo data and its files, its log kept so that a call that logged an
// ERROR line (an internal error, a panic) fails even if its answer hid it.
type fuzzServer struct {
	url    string
	client *http.Client
	logs   apitest.LogBuffer
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	tb.Helper()
	fs := apitest.Files(tb)
	st := testdb.DemoWithFiles.Open(tb, fs)
	s := &fuzzServer{}
	log := s.logs.Logger(slog.LevelError)
	srv := httptest.NewServer(server.Handler(st, log, server.Options{Files: fs, RESTBaseURL: rest.DefaultBaseURL}))
	tb.Cleanup(srv.Close)
	s.url = srv.URL
	s.client = &http.Client{
		// A redirect is an answer: judged as it is, not where it leads.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		// An answer this long after the request deadline is a hang,
		// reported as the input that caused it.
		Timeout: server.DefaultRequestTimeout + 20*time.Second,
	}
	return s
}

// fuzzIDs are ids and a signed photo URL of the demo data, read as a
// client reads them, so that seeds reach the database.
type fuzzIDs struct {
	inventory, signed, item, property, photoPath, photoQuery string
}

func (s *fuzzServer) ids(tb testing.TB) fuzzIDs {
	tb.Helper()
	var ids fuzzIDs
	var list struct {
		Data struct {
			Data []struct {
				InventoryID string
				Property    struct{ PropertyID string }
			}
		}
	}
	s.getJSON(tb, rest.DefaultBaseURL+"/inventories?isSigned=true&pageSize=1&x-company-id="+fuzzCompanyA, &list)
	if len(list.Data.Data) == 0 {
		tb.Fatal("no signed inventory in the demo data")
	}
	ids.signed, ids.property = list.Data.Data[0].InventoryID, list.Data.Data[0].Property.PropertyID
	s.getJSON(tb, rest.DefaultBaseURL+"/inventories?isSigned=false&pageSize=1&x-company-id="+fuzzCompanyA, &list)
	if len(list.Data.Data) == 0 {
		tb.Fatal("no unsigned inventory in the demo data")
	}
	ids.inventory = list.Data.Data[0].InventoryID
	// An item with photos, through GraphQL as the REST tests do.
	var data struct {
		Inventories struct {
			Edges []struct {
				Node struct {
					Environments []struct {
						Items []struct {
							ID     string
							Photos []struct{ URL string }
						}
					}
				}
			}
		}
	}
	gql := apitest.Server{URL: s.url}
	gql.MustData(tb, fuzzCompanyA, `{ inventories(first: 5) { edges { node { environments(first: 5) { items(first: 5) { id photos(first: 1) { url } } } } } } }`, nil, &data)
	for _, e := range data.Inventories.Edges {
		for _, env := range e.Node.Environments {
			for _, it := range env.Items {
				if len(it.Photos) > 0 && ids.photoPath == "" {
					u, err := url.Parse(it.Photos[0].URL)
					if err != nil {
						tb.Fatal(err)
					}
					ids.item, ids.photoPath, ids.photoQuery = it.ID, u.Path, u.RawQuery
				}
			}
		}
	}
	if ids.photoPath == "" {
		tb.Fatal("no photo in the demo data")
	}
	return ids
}

func (s *fuzzServer) getJSON(tb testing.TB, path string, out any) {
	tb.Helper()
	res, err := s.client.Get(s.url + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
}

// fuzzEndpoints are the REST endpoints, each as a function of the fuzzed id:
// in the path for group A and the photos, in the query for group B.
var fuzzEndpoints = []struct {
	name    string
	path    string // the id follows it
	idParam string // for group B: the query parameter the id goes in
}{
	{name: "A1", path: "/inventory/detail/"},
	{name: "A2", path: "/inventory/download-pdf/"},
	{name: "A3", path: "/inventory/download-photos/itemDiagnostic/"},
	{name: "A4", path: "/property/get_properties/"},
	{name: "A5", path: "/property/get_property_uuid/"},
	{name: "B1", path: rest.DefaultBaseURL + "/inventories", idParam: "sortBy"},
	{name: "B2", path: rest.DefaultBaseURL + "/inventories/details", idParam: "InventoryId"},
	{name: "B3", path: rest.DefaultBaseURL + "/inventories/by-property", idParam: "propertyId"},
	{name: "photo", path: "/files/photos/"},
	{name: "any", path: "/"},
}

// Modes of a fuzzed REST call, as bits.
const (
	fuzzEscapeID       = 1 << iota // the id is %-escaped rather than sent raw
	fuzzCompanyHeader              // the company goes in the X-Company-Id header
	fuzzCompanyQuery               // the company goes in the query, escaped
	fuzzHead                       // HEAD rather than GET
	fuzzRangeFromQuery             // the raw query is sent as a Range header instead
)

// FuzzRESTParameters sends each REST endpoint a fuzzed id (in its path or its
// query), a raw query string, and a company in the header and/or the query.
// Whatever they hold, the answer is a client's: below 500, JSON where JSON is
// due, an error in the REST shape, no INTERNAL code, nothing logged as ERROR.
func FuzzRESTParameters(f *testing.F) {
	s := newFuzzServer(f)
	ids := s.ids(f)
	const both = fuzzCompanyHeader | fuzzCompanyQuery
	long := strings.Repeat("9", 10_000)
	for _, seed := range []struct {
		endpoint          uint8
		id, query, header string
		mode              uint8
	}{
		// Valid calls of every endpoint, that reach the database.
		{0, ids.inventory, "", fuzzCompanyA, fuzzCompanyHeader},
		{0, ids.signed, "", fuzzCompanyA, fuzzCompanyQuery},
		{1, ids.signed, "", "", 0},
		{1, ids.signed, "bytes=0-99", fuzzCompanyA, fuzzRangeFromQuery | fuzzCompanyHeader},
		{1, ids.signed, "bytes=" + manyRangesSeed(3000), "", fuzzRangeFromQuery},
		{1, ids.inventory, "", fuzzCompanyA, both},
		{2, ids.item, "", fuzzCompanyA, fuzzCompanyHeader},
		{3, fuzzCompanyA, "page=1&sorter=asc", fuzzCompanyA, fuzzCompanyHeader},
		{3, fuzzCompanyA, "page=2147483647&sorter=DESC", "", 0},
		{4, ids.property, "", fuzzCompanyA, fuzzCompanyQuery},
		{5, "createdAt", "page=1&pageSize=20&sortOrder=asc&isSigned=true&inventoryType=3", fuzzCompanyA, fuzzCompanyHeader},
		{5, "signatureDate", "page=2147483647&pageSize=100&sortOrder=DESC&inventoryType=null&isSigned=null", fuzzCompanyA, both},
		{6, ids.inventory, "", fuzzCompanyA, fuzzCompanyQuery},
		{7, ids.property, "page=1&pageSize=100", fuzzCompanyA, fuzzCompanyHeader},
		{8, strings.TrimPrefix(ids.photoPath, "/files/photos/"), ids.photoQuery, "", 0},
		{8, strings.TrimPrefix(ids.photoPath, "/files/photos/"), ids.photoQuery, "", fuzzRangeFromQuery},
		{9, "openapi.json", "", "", 0},
		{9, "healthz", "", "", fuzzHead},
		// Edge numbers and values out of their range.
		{5, "", "page=0&pageSize=0", fuzzCompanyA, fuzzCompanyHeader},
		{5, "", "page=-1&pageSize=101", fuzzCompanyA, fuzzCompanyHeader},
		{5, "", "page=99999999999999999999&pageSize=1e2", fuzzCompanyA, fuzzCompanyHeader},
		{7, ids.property, "page=2147483648&pageSize=-2147483649", fuzzCompanyA, fuzzCompanyHeader},
		{3, fuzzCompanyA, "page=" + long + "&sorter=" + long, "", 0},
		{5, "", "inventoryType=4&isSigned=TRUE&sortBy=id&sortOrder=up", fuzzCompanyA, fuzzCompanyHeader},
		// Malformed escapes and semicolons, in the query, the path and the company.
		{5, "", "page=%zz&pageSize=%", fuzzCompanyA, fuzzCompanyHeader},
		{5, "", "x-company-id=" + fuzzCompanyA + ";", fuzzCompanyB, fuzzCompanyHeader},
		{0, ids.inventory, "x-company-id=" + fuzzCompanyB + ";x", fuzzCompanyA, fuzzCompanyHeader},
		{0, ids.inventory, "x-company-id=%zz" + fuzzCompanyB, "", 0},
		{6, ids.inventory, "x-company-id=" + fuzzCompanyA + "%", "", 0},
		{6, "%zz", "", fuzzCompanyA, fuzzCompanyHeader},
		{0, "%zz", "", "", 0},
		{0, "%", "a=%G1;b=;;&&=", "", 0},
		{2, ids.item + ";x=1", "", fuzzCompanyA, fuzzCompanyHeader},
		{2, "..%2F..%2F", "", "", fuzzEscapeID},
		{8, "..%2Fpdf%2F" + ids.signed + ".pdf", "expires=1&signature=x", "", 0},
		{8, "a", "expires=99999999999999999999&signature=", "", 0},
		// Repeated parameters that disagree.
		{5, "", "x-company-id=" + fuzzCompanyA + "&x-company-id=" + fuzzCompanyB + "&page=1&page=2", "", 0},
		{7, ids.property, "propertyId=" + ids.inventory + "&page=1;page=2", fuzzCompanyA, fuzzCompanyHeader},
		// Companies that are not UUIDs.
		{5, "", "", fuzzCompanyA + ";", fuzzCompanyHeader},
		{5, "", "", strings.ToUpper(fuzzCompanyA), both},
		{5, "", "", "{" + fuzzCompanyA + "}", fuzzCompanyQuery},
		{0, ids.inventory, "", "11111111-1111-4111-8111-11111111111%27", both},
		{0, ids.inventory, "", "été", fuzzCompanyHeader},
		// NUL bytes, unicode, control characters, long strings.
		{0, ids.inventory + "\x00", "", fuzzCompanyA, fuzzEscapeID | fuzzCompanyHeader},
		{6, ids.inventory + "\x00", "", fuzzCompanyA + "\x00", fuzzEscapeID | fuzzCompanyQuery},
		{5, "\x00", "sortBy=%00&sortOrder=%00", "\x00", fuzzCompanyQuery},
		{4, "🏠\u202e", "", "🏠", fuzzEscapeID | fuzzCompanyHeader},
		{4, "\xff\xfe", "%FF%FE=%C0%AF", "", 0},
		{9, "graphql", "query=%7B__typename%7D", fuzzCompanyA, fuzzCompanyHeader},
		{9, long, "", "", 0},
		{3, long, "", long, both},
		{5, "' OR 1=1 --", "sortBy='%20OR%201=1--", fuzzCompanyA, fuzzEscapeID | fuzzCompanyHeader},
	} {
		f.Add(seed.endpoint, seed.id, seed.query, seed.header, seed.mode)
	}
	f.Fuzz(func(t *testing.T, endpoint uint8, id, rawQuery, company string, mode uint8) {
		e := fuzzEndpoints[int(endpoint)%len(fuzzEndpoints)]
		var query []string
		target := e.path
		switch {
		case e.idParam != "" && mode&fuzzEscapeID != 0:
			query = append(query, e.idParam+"="+url.QueryEscape(id))
		case e.idParam != "":
			query = append(query, e.idParam+"="+id)
		case mode&fuzzEscapeID != 0:
			target += url.PathEscape(id)
		default:
			target += id
		}
		if rawQuery != "" && mode&fuzzRangeFromQuery == 0 {
			query = append(query, rawQuery)
		}
		if mode&fuzzCompanyQuery != 0 {
			query = append(query, "x-company-id="+url.QueryEscape(company))
		}
		method := http.MethodGet
		if mode&fuzzHead != 0 {
			method = http.MethodHead
		}
		req, err := http.NewRequest(method, s.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The target goes on the request line as it is: malformed escapes
		// and semicolons reach the server. Bytes that cannot be sent on a
		// request line at all are escaped.
		req.URL.Opaque, req.URL.RawQuery = fuzzSendable(target), fuzzSendable(strings.Join(query, "&"))
		if mode&fuzzCompanyHeader != 0 {
			req.Header.Set("X-Company-Id", fuzzHeaderValue(company))
		}
		if mode&fuzzRangeFromQuery != 0 {
			req.Header.Set("Range", fuzzHeaderValue(rawQuery))
		}
		before := len(s.logs.ErrorLines())
		res, err := s.client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: no answer (a panic, or the connection closed): %v", method, req.URL.RequestURI(), err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil && !fuzzFromNetHTTP(res, body) {
			t.Fatalf("%s %s: the answer was cut: %v", method, req.URL.RequestURI(), err)
		}
		if problem := fuzzJudgeREST(method, fuzzRESTPath(req.URL.Opaque), res, body); problem != "" {
			t.Errorf("%s %s (X-Company-Id %q, Range %q): %s\n%d %s", method, req.URL.RequestURI(), req.Header.Get("X-Company-Id"), req.Header.Get("Range"), problem, res.StatusCode, fuzzClip(body))
		}
		if logged := s.logs.ErrorLines()[before:]; len(logged) > 0 {
			t.Errorf("%s %s: the server logged ERROR: %s", method, req.URL.RequestURI(), strings.Join(logged, "\n"))
		}
	})
}

// fuzzRESTPath reports whether the path is REST's: everything but GraphQL,
// the IDE and the health checks, which answer in shapes of their own.
func fuzzRESTPath(target string) bool {
	p, err := url.PathUnescape(target)
	if err != nil {
		return true
	}
	p = path.Clean("/" + p)
	return p != "/" && p != "/graphql" && p != "/ide" && !strings.HasPrefix(p, "/ide/") && p != "/healthz" && p != "/readyz"
}

// fuzzJudgeREST returns what is wrong with an answer, or "": restPath says
// whether an error must be in the REST shape.
func fuzzJudgeREST(method string, restPath bool, res *http.Response, body []byte) string {
	ct := res.Header.Get("Content-Type")
	switch {
	case res.StatusCode >= 500:
		// 503 UNAVAILABLE and 504 DEADLINE_EXCEEDED are documented, but
		// nothing here makes the database busy or a request slow.
		return "a server error"
	case fuzzFromNetHTTP(res, body):
		return "" // net/http refused the request line before any handler ran
	case method == http.MethodHead:
		return ""
	// Downloads answer range and conditional requests as http.ServeContent
	// does: 416 in plain text (documented), 412 without a body.
	case res.StatusCode == http.StatusRequestedRangeNotSatisfiable && strings.HasPrefix(ct, "text/plain"),
		res.StatusCode == http.StatusPreconditionFailed && len(body) == 0:
		return ""
	case res.StatusCode >= 400 && restPath:
		var e struct {
			Success   *bool
			Timestamp string
			Error     struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Success == nil || *e.Success || e.Timestamp == "" || e.Error.Code == "" || e.Error.Message == "" {
			return "an error not in the REST shape {success:false, timestamp, error:{code, message}}"
		}
		if e.Error.Code == "INTERNAL" {
			return "an INTERNAL error"
		}
	case strings.Contains(ct, "json"):
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return "a body that is not the JSON its Content-Type says: " + err.Error()
		}
		if fuzzHasInternal(v) {
			return "an INTERNAL code in the answer"
		}
	}
	return ""
}

// fuzzHasInternal reports whether a decoded JSON value holds a "code" of
// INTERNAL at any depth. It reads the structure rather than the text, since
// messages quote the client's own input, which may say INTERNAL.
func fuzzHasInternal(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "code" && x == "INTERNAL" || fuzzHasInternal(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if fuzzHasInternal(x) {
				return true
			}
		}
	}
	return false
}

// fuzzFromNetHTTP reports whether the answer is the plain-text 400 or 431
// that net/http writes itself when it cannot parse a request.
func fuzzFromNetHTTP(res *http.Response, body []byte) bool {
	prefix := res.Status[:min(len(res.Status), 4)]
	return (res.StatusCode == http.StatusBadRequest || res.StatusCode == http.StatusRequestHeaderFieldsTooLarge) &&
		strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") && strings.HasPrefix(prefix, string(body[:min(len(body), len(prefix))]))
}

// fuzzSendable escapes the bytes that cannot go on a request line (controls
// and spaces: http.Client refuses them) and keeps the rest raw.
func fuzzSendable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			b.WriteString(url.QueryEscape(string(c)))
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// fuzzHeaderValue drops the bytes a header value cannot hold.
func fuzzHeaderValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func fuzzClip(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "..."
	}
	return string(b)
}

// manyRangesSeed is n one-byte ranges.
func manyRangesSeed(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i) + "-" + strconv.Itoa(i)
	}
	return strings.Join(parts, ",")
}
