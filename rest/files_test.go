package rest_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// signedInventory returns a signed inventory of company A from B1.
func signedInventory(t *testing.T, a *api) summary {
	t.Helper()
	var list listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "isSigned", "true", "pageSize", "1"), &list)
	return list.Data.Data[0]
}

func TestA2ServesTheSignedPDF(t *testing.T) {
	a := demoWithFiles(t)
	inv := signedInventory(t, a)
	var gql struct {
		Node struct {
			PDFURL    string `json:"pdfUrl"`
			PDFSha256 string `json:"pdfSha256"`
		} `json:"node"`
	}
	a.MustData(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { pdfUrl pdfSha256 } } }`, map[string]any{"id": inv.InventoryID}, &gql)
	if inv.PDFDownloadURL == nil || *inv.PDFDownloadURL != gql.Node.PDFURL || !strings.HasPrefix(gql.Node.PDFURL, a.URL+"/inventory/download-pdf/") {
		t.Fatalf("B1 pdfDownloadUrl %v, GraphQL pdfUrl %s: want the same A2 URL", inv.PDFDownloadURL, gql.Node.PDFURL)
	}

	path := strings.TrimPrefix(gql.Node.PDFURL, a.URL)
	res := a.get(t, path)
	sum := sha256.Sum256(res.body)
	disposition := res.header.Get("Content-Disposition")
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(res.body, []byte("%PDF-")) ||
		hex.EncodeToString(sum[:]) != gql.Node.PDFSha256 || res.header.Get("ETag") != `"`+gql.Node.PDFSha256+`"` ||
		res.header.Get("Repr-Digest") != reprDigest(sum) ||
		!strings.HasPrefix(disposition, `attachment; filename="inventario-`) || !strings.Contains(disposition, `filename*=UTF-8''inventario-`) {
		t.Fatalf("A2: got %d %v (%d bytes): want the PDF whose SHA-256 GraphQL states, as an attachment", res.status, res.header, len(res.body))
	}

	// Last-Modified is the signature date, the moment the PDF became evidence.
	signed, err := time.Parse(time.RFC3339, *inv.SignatureDate)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.header.Get("Last-Modified"); got != signed.UTC().Format(http.TimeFormat) {
		t.Errorf("Last-Modified: got %q, want the signature date %s", got, signed.UTC().Format(http.TimeFormat))
	}

	// The report names the inventory's environments, items and materials, as pdftotext reads it.
	text := strings.Join(strings.Fields(pdfText(t, res.body)), " ")
	var a1 a1Named
	a.getJSON(t, "/inventory/detail/"+inv.InventoryID, &a1)
	for _, env := range a1.EnvironmentDiagnostics {
		if !strings.Contains(text, env.EnvironmentName) {
			t.Errorf("the PDF does not name environment %q:\n%s", env.EnvironmentName, text)
		}
		for _, it := range env.ItemDiagnostic {
			if !strings.Contains(text, it.ItemName) || !strings.Contains(text, it.Material.MaterialName) {
				t.Errorf("the PDF does not name item %q of %q:\n%s", it.ItemName, it.Material.MaterialName, text)
			}
		}
	}
	if !strings.Contains(text, a1.Property.Address) {
		t.Errorf("the PDF does not name the property's address %q", a1.Property.Address)
	}
	if a1.ApprovalCode == nil || !strings.Contains(text, *a1.ApprovalCode) {
		t.Errorf("the PDF does not carry the approval code %v", a1.ApprovalCode)
	}

	partial := a.call(t, http.MethodGet, path, http.Header{"Range": {"bytes=0-4"}})
	if partial.status != http.StatusPartialContent || string(partial.body) != "%PDF-" {
		t.Errorf("Range: got %d %q", partial.status, partial.body)
	}
	if res := a.call(t, http.MethodGet, path, http.Header{"If-None-Match": {`"` + gql.Node.PDFSha256 + `"`}}); res.status != http.StatusNotModified {
		t.Errorf("If-None-Match: got %d, want 304", res.status)
	}
	if res := a.call(t, http.MethodGet, path, http.Header{"If-Modified-Since": {signed.UTC().Format(http.TimeFormat)}}); res.status != http.StatusNotModified {
		t.Errorf("If-Modified-Since the signature date: got %d, want 304", res.status)
	}
	before := signed.Add(-time.Hour).UTC().Format(http.TimeFormat)
	if res := a.call(t, http.MethodGet, path, http.Header{"If-Modified-Since": {before}}); res.status != http.StatusOK || len(res.body) == 0 {
		t.Errorf("If-Modified-Since an hour before signing: got %d, want 200 and the PDF", res.status)
	}
	if res := a.call(t, http.MethodHead, path, nil); res.status != http.StatusOK || len(res.body) != 0 || res.header.Get("Content-Length") == "" {
		t.Errorf("HEAD: got %d, %d bytes", res.status, len(res.body))
	}
}

type a1Named struct {
	ApprovalCode           *string `json:"Approval_Code"`
	Property               struct{ Address string }
	EnvironmentDiagnostics []struct {
		EnvironmentName string
		ItemDiagnostic  []struct {
			ItemDiagnosticID string `json:"ItemDiagnosticId"`
			ItemName         string
			Material         struct{ MaterialName string }
			Photo            []struct{ StorageReference string }
		}
	}
}

// pdfText runs pdftotext (poppler-utils), which CI installs.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext is missing: .ci/run installs poppler-utils")
		}
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	cmd := exec.Command("pdftotext", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// TestFilesNotStoredAre404 runs on records whose files were never stored
// (demo without files). A signed inventory still has its signed PDF (spec
// section 3): every interface gives its URL, and A2 renders it from the
// record on the first request, records its SHA-256, and serves the same
// bytes from then on. Photos, which cannot be made again, are 404 through
// the real endpoints, never 500.
func TestFilesNotStoredAre404(t *testing.T) {
	a := demo(t)
	inv := signedInventory(t, a)
	want := a.URL + "/inventory/download-pdf/" + inv.InventoryID
	if inv.PDFDownloadURL == nil || *inv.PDFDownloadURL != want {
		t.Errorf("B1 pdfDownloadUrl of a signed inventory whose PDF is not stored yet: got %v, want %s", inv.PDFDownloadURL, want)
	}
	var b2 struct {
		Data struct {
			PDFDownloadURL *string `json:"pdfDownloadUrl"`
		}
	}
	a.getJSON(t, base+"/inventories/details"+query("x-company-id", companyA, "InventoryId", inv.InventoryID), &b2)
	if b2.Data.PDFDownloadURL == nil || *b2.Data.PDFDownloadURL != want {
		t.Errorf("B2 pdfDownloadUrl: got %v, want %s", b2.Data.PDFDownloadURL, want)
	}
	digest := func() *string {
		var gql struct{ Node struct{ PDFSha256 *string } }
		a.MustData(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { pdfSha256: pdfSha256 } } }`, map[string]any{"id": inv.InventoryID}, &gql)
		return gql.Node.PDFSha256
	}
	if d := digest(); d != nil {
		t.Fatalf("the demo without files recorded a PDF digest %s", *d)
	}
	first := a.get(t, "/inventory/download-pdf/"+inv.InventoryID)
	sum := sha256.Sum256(first.body)
	recorded := digest()
	switch {
	case first.status != http.StatusOK || first.header.Get("Content-Type") != "application/pdf":
		t.Fatalf("A2 of a signed inventory whose PDF was never stored: got %d %s, want the PDF rendered now", first.status, first.header.Get("Content-Type"))
	case recorded == nil || *recorded != hex.EncodeToString(sum[:]):
		t.Errorf("digest recorded after the first A2: got %v, want the served PDF's %x", recorded, sum)
	case first.header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"`:
		t.Errorf("ETag %s, want the PDF's SHA-256", first.header.Get("ETag"))
	case first.header.Get("Repr-Digest") != reprDigest(sum):
		t.Errorf("Repr-Digest %q, want %q (RFC 9530)", first.header.Get("Repr-Digest"), reprDigest(sum))
	}
	if text := pdfText(t, first.body); !strings.Contains(text, inv.InventoryID) {
		t.Errorf("the rendered PDF does not name its inventory:\n%.500s", text)
	}
	if again := a.get(t, "/inventory/download-pdf/"+inv.InventoryID); again.status != http.StatusOK || !bytes.Equal(again.body, first.body) {
		t.Errorf("A2 again: got %d and %d bytes, want the same %d bytes", again.status, len(again.body), len(first.body))
	}

	var a1 a1Named
	a.getJSON(t, "/inventory/detail/"+inv.InventoryID, &a1)
	var photos struct{ Photos []struct{ Url string } }
	for _, env := range a1.EnvironmentDiagnostics {
		for _, it := range env.ItemDiagnostic {
			if len(photos.Photos) == 0 && len(it.Photo) > 0 {
				a.getJSON(t, "/inventory/download-photos/itemDiagnostic/"+it.ItemDiagnosticID, &photos)
			}
		}
	}
	if len(photos.Photos) == 0 {
		t.Fatal("no item with photos")
	}
	photo := a.get(t, strings.TrimPrefix(photos.Photos[0].Url, a.URL))
	if code, _ := errorOf(t, photo); photo.status != http.StatusNotFound || code != "NOT_FOUND" {
		t.Errorf("a validly signed URL of a photo that is not stored: got %d %s, want 404 NOT_FOUND", photo.status, code)
	}
}

// reprDigest is an RFC 9530 Repr-Digest field of a SHA-256.
func reprDigest(sum [32]byte) string {
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// TestTraversalNeverReachesStorage sends references that try to leave the
// photo folder to the real server, some even with a valid signature for the
// traversing key (the test store's key is known): none is served.
func TestTraversalNeverReachesStorage(t *testing.T) {
	a := demoWithFiles(t)
	inv := signedInventory(t, a)
	sign := func(key string) string {
		expires := time.Now().Add(time.Minute).Unix()
		mac := hmac.New(sha256.New, []byte(apitest.SigningKey))
		fmt.Fprintf(mac, "%s\n%d\n%s", key, expires, "")
		return fmt.Sprintf("expires=%d&signature=%s", expires, base64.RawURLEncoding.EncodeToString(mac.Sum(nil)))
	}
	pdf := "pdf/" + inv.InventoryID + ".pdf"
	for _, path := range []string{
		"/files/photos/..%2F" + strings.ReplaceAll(pdf, "/", "%2F") + "?" + sign("photos/../"+pdf),
		"/files/photos/%2e%2e%2F" + strings.ReplaceAll(pdf, "/", "%2F") + "?" + sign("photos/../"+pdf),
		"/files/photos/%2Fetc%2Fpasswd?" + sign("photos//etc/passwd"),
		"/files/photos/..%5C..%5Cpdf%5C" + inv.InventoryID + ".pdf?" + sign(`photos/..\..\pdf\`+inv.InventoryID+".pdf"),
		"/inventory/download-pdf/..%2F..%2F" + inv.InventoryID,
		"/inventory/download-pdf/%2e%2e%2Fpdf%2F" + inv.InventoryID,
		"/inventory/download-photos/itemDiagnostic/..%2F..%2Fpdf",
	} {
		res, body := a.Get(t, path, nil)
		if res.StatusCode == http.StatusOK || res.StatusCode >= 500 || bytes.Contains(body, []byte("%PDF-")) {
			t.Errorf("%s: got %d with %d bytes, want a 4xx and no file", path, res.StatusCode, len(body))
		}
	}
}

func TestA2RefusesWhatIsNotASignedPDF(t *testing.T) {
	a := demo(t)
	var unsigned listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "isSigned", "false", "pageSize", "1"), &unsigned)
	inv := signedInventory(t, a)
	for _, tt := range []struct {
		path   string
		status int
		code   string
	}{
		{"/inventory/download-pdf/" + unsigned.Data.Data[0].InventoryID, http.StatusConflict, "CONFLICT"},
		{"/inventory/download-pdf/5b0c0f0e-8d4c-4c59-9d0e-1f2a3b4c5d6e", http.StatusNotFound, "NOT_FOUND"},
		{"/inventory/download-pdf/" + inv.Property.PropertyID, http.StatusNotFound, "NOT_FOUND"},
		{"/inventory/download-pdf/" + inv.InventoryID + query("x-company-id", companyB), http.StatusNotFound, "NOT_FOUND"},
		{"/inventory/download-pdf/nope", http.StatusBadRequest, "INVALID_ARGUMENT"},
	} {
		res := a.get(t, tt.path)
		if code, _ := errorOf(t, res); res.status != tt.status || code != tt.code {
			t.Errorf("%s: got %d %s, want %d %s", tt.path, res.status, code, tt.status, tt.code)
		}
	}
}

func TestA3PhotoURLsDownloadTheStatedImages(t *testing.T) {
	a := demoWithFiles(t)
	var list listEnvelope
	a.getJSON(t, base+"/inventories"+query("x-company-id", companyA, "pageSize", "5"), &list)
	checked := 0
	for _, s := range list.Data.Data {
		var a1 a1Named
		a.getJSON(t, "/inventory/detail/"+s.InventoryID, &a1)
		for _, env := range a1.EnvironmentDiagnostics {
			for _, it := range env.ItemDiagnostic {
				res := a.get(t, "/inventory/download-photos/itemDiagnostic/"+it.ItemDiagnosticID)
				var raw struct {
					ItemDiagnosticID string `json:"ItemDiagnosticId"`
					Photos           []map[string]string
				}
				if err := json.Unmarshal(res.body, &raw); err != nil || res.status != http.StatusOK || raw.ItemDiagnosticID != it.ItemDiagnosticID {
					t.Fatalf("A3 %s: %d %s", it.ItemDiagnosticID, res.status, res.body)
				}
				if len(raw.Photos) != len(it.Photo) {
					t.Errorf("A3 %s: %d photos, A1 shows %d", it.ItemDiagnosticID, len(raw.Photos), len(it.Photo))
				}
				for _, p := range raw.Photos {
					img, body := a.Get(t, strings.TrimPrefix(p["Url"], a.URL), nil)
					sum := sha256.Sum256(body)
					if img.StatusCode != http.StatusOK || img.Header.Get("Content-Type") != p["ContentType"] || p["ContentType"] != "image/jpeg" ||
						hex.EncodeToString(sum[:]) != p["Sha256"] || img.Header.Get("X-Content-Type-Options") != "nosniff" ||
						!cachedAtMostAsLongAsTheURL(img.Header.Get("Cache-Control")) || !bytes.HasPrefix(body, []byte{0xff, 0xd8}) ||
						img.Header.Get("Repr-Digest") != reprDigest(sum) {
						t.Errorf("photo %s: got %d %v, SHA-256 %x, want the JPEG whose SHA-256 is %s", p["StorageReference"], img.StatusCode, img.Header, sum, p["Sha256"])
					}
					checked++
					tampered := strings.Replace(p["Url"], "signature=", "signature=x", 1)
					if res, _ := a.Get(t, strings.TrimPrefix(tampered, a.URL), nil); res.StatusCode != http.StatusForbidden {
						t.Errorf("tampered photo URL: got %d, want 403", res.StatusCode)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no photo was checked")
	}
	if res := a.get(t, "/inventory/download-photos/itemDiagnostic/"+list.Data.Data[0].InventoryID); res.status != http.StatusNotFound {
		t.Errorf("A3 with an inventory's id: got %d, want 404", res.status)
	}
}

// cachedAtMostAsLongAsTheURL: a photo may be cached privately, and no longer
// than its signed URL (15 minutes) is valid.
func cachedAtMostAsLongAsTheURL(cacheControl string) bool {
	var maxAge int
	if _, err := fmt.Sscanf(cacheControl, "private, max-age=%d", &maxAge); err != nil {
		return false
	}
	return maxAge > 0 && maxAge <= 15*60
}

// getAs fetches path naming host in the Host header (the client sends
// req.Host, not a Host entry of the header map).
func getAs(t *testing.T, a *api, path, host string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
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
	return res, body
}

// downloadURLs are the PDF URL (B1) and a photo URL (A3) handed to a client
// that sends host.
func downloadURLs(t *testing.T, a *api, host string, header http.Header) (pdf, photo string) {
	t.Helper()
	_, body := getAs(t, a, base+"/inventories"+query("x-company-id", companyA, "isSigned", "true", "pageSize", "1"), host, header)
	var list listEnvelope
	if err := json.Unmarshal(body, &list); err != nil || len(list.Data.Data) == 0 || list.Data.Data[0].PDFDownloadURL == nil {
		t.Fatalf("B1 as %s: %s", host, body)
	}
	inv := list.Data.Data[0]
	var a1 a1Named
	a.getJSON(t, "/inventory/detail/"+inv.InventoryID, &a1)
	for _, env := range a1.EnvironmentDiagnostics {
		for _, it := range env.ItemDiagnostic {
			if len(it.Photo) == 0 {
				continue
			}
			_, body := getAs(t, a, "/inventory/download-photos/itemDiagnostic/"+it.ItemDiagnosticID, host, header)
			var photos struct{ Photos []struct{ Url string } }
			if err := json.Unmarshal(body, &photos); err != nil || len(photos.Photos) == 0 {
				t.Fatalf("A3 as %s: %s", host, body)
			}
			return *inv.PDFDownloadURL, photos.Photos[0].Url
		}
	}
	t.Fatal("no item with photos")
	return "", ""
}

// Without INVENTORY_PUBLIC_URL, a forged Host does not choose where the
// signed download URLs point: they name the address the request arrived on.
func TestDownloadURLsIgnoreAForgedHost(t *testing.T) {
	a := demoWithFiles(t)
	port := strings.TrimPrefix(a.URL, "http://127.0.0.1:")
	for _, tt := range []struct {
		host   string
		header http.Header
		want   string
	}{
		{"evil.example", nil, a.URL},
		{"evil.example", http.Header{"X-Forwarded-Host": {"evil.example"}}, a.URL},
		{"localhost:" + port, nil, "http://localhost:" + port},
		{"localhost:" + port, http.Header{"X-Forwarded-Proto": {"https"}}, "https://localhost:" + port},
	} {
		pdf, photo := downloadURLs(t, a, tt.host, tt.header)
		if !strings.HasPrefix(pdf, tt.want+"/inventory/download-pdf/") || !strings.HasPrefix(photo, tt.want+"/files/photos/") {
			t.Errorf("Host %s %v: got %s and %s, want URLs under %s", tt.host, tt.header, pdf, photo, tt.want)
		}
	}

	// A name the operator allows is used as sent.
	fs := apitest.Files(t)
	st := testdb.DemoWithFiles.Open(t, fs)
	allowing := withDocument(t, apitest.NewServerWith(t, st, server.Options{Files: fs, AllowedHosts: []string{"inventory.example"}}))
	if pdf, _ := downloadURLs(t, allowing, "inventory.example:8443", nil); !strings.HasPrefix(pdf, "http://inventory.example:8443/") {
		t.Errorf("allowed host: got %s, want it under http://inventory.example:8443", pdf)
	}
	if pdf, _ := downloadURLs(t, allowing, "evil.example", nil); !strings.HasPrefix(pdf, allowing.URL+"/") {
		t.Errorf("another host beside an allowed one: got %s, want it under %s", pdf, allowing.URL)
	}
}

// manyRanges is a Range header asking for each of the first n bytes on its own.
func manyRanges(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%d-%d", i, i)
	}
	return "bytes=" + strings.Join(parts, ",")
}

// 5000 one-byte ranges of the PDF made a multipart answer 137 times its
// size; now more than 16 ranges get the file once.
func TestManyRangesCostNoMoreThanTheFile(t *testing.T) {
	a := demoWithFiles(t)
	pdf, photo := downloadURLs(t, a, strings.TrimPrefix(a.URL, "http://"), nil)
	for _, u := range []string{pdf, photo} {
		path := strings.TrimPrefix(u, a.URL)
		whole := a.get(t, path)
		if whole.status != http.StatusOK || len(whole.body) < 100 {
			t.Fatalf("%s: got %d with %d bytes", path, whole.status, len(whole.body))
		}
		res := a.call(t, http.MethodGet, path, http.Header{"Range": {manyRanges(5000)}})
		if res.status != http.StatusOK || !bytes.Equal(res.body, whole.body) {
			t.Errorf("%s with 5000 ranges: got %d with %d bytes, want 200 and the file's %d bytes", path, res.status, len(res.body), len(whole.body))
		}
		res = a.call(t, http.MethodGet, path, http.Header{"Range": {manyRanges(16)}})
		if res.status != http.StatusPartialContent || len(res.body) > len(whole.body)+2048 {
			t.Errorf("%s with 16 ranges: got %d with %d bytes, want 206 within 2 KiB of the file's %d", path, res.status, len(res.body), len(whole.body))
		}
	}
}
