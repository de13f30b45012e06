package graph_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/graph/graphqlhttp"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/tenant"
)

const addPhotoMutation = `mutation AddPhoto($itemId: ID!, $file: Upload!, $photoId: ID) {
	addItemPhoto(itemId: $itemId, file: $file, photoId: $photoId) { photo { id url sha256 storageReference contentType } } }`

type addedPhoto struct {
	ID               string `json:"id"`
	URL              string `json:"url"`
	SHA256           string `json:"sha256"`
	StorageReference string `json:"storageReference"`
	ContentType      string `json:"contentType"`
}

// aJPEG is a real photo: a gradient a phone could have taken.
func aJPEG(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for x := range 64 {
		for y := range 48 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 90, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// upload sends addItemPhoto as the GraphQL multipart request spec says
// (what apollo-upload-client sends), with header set on the request.
func upload(t testing.TB, srv *apitest.Server, company string, vars map[string]any, file []byte, header http.Header) (int, addedPhoto, []apitest.Error) {
	t.Helper()
	vars["file"] = nil
	ops, _ := json.Marshal(map[string]any{"query": addPhotoMutation, "variables": vars, "operationName": "AddPhoto"})
	return sendMultipart(t, srv, company, string(ops), `{"0": ["variables.file"]}`, file, header)
}

// sendMultipart sends a multipart request of the operations and map parts
// given and file as its part "0".
func sendMultipart(t testing.TB, srv *apitest.Server, company, operations, fileMap string, file []byte, header http.Header) (int, addedPhoto, []apitest.Error) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("operations", operations)
	_ = mw.WriteField("map", fileMap)
	part, _ := mw.CreateFormFile("0", "IMG_0001.jpg")
	_, _ = part.Write(file)
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/graphql", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-Company-Id", company)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out struct {
		Data *struct {
			AddItemPhoto *struct {
				Photo addedPhoto `json:"photo"`
			} `json:"addItemPhoto"`
		} `json:"data"`
		Errors []apitest.Error `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decoding (HTTP %d): %v\n%s", res.StatusCode, err, raw)
	}
	if out.Data != nil && out.Data.AddItemPhoto != nil {
		return res.StatusCode, out.Data.AddItemPhoto.Photo, out.Errors
	}
	return res.StatusCode, addedPhoto{}, out.Errors
}

var preflight = http.Header{"Apollo-Require-Preflight": {"true"}}

// The flow of a field app: make the inventory, photograph an item, change
// the inventory, sign it for the agent (remotely) and the owner; then the
// legacy REST contract serves the signed PDF naming both signers, shows it
// signed and remotely signed, and the item's photo.
func TestAFieldAppMakesPhotographsAndSignsAnInventory(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 2, 2))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	itemID := made.Environments[0].Items[0].ID
	jpg := aJPEG(t)
	sum := sha256.Sum256(jpg)
	photoID := uuid.NewString()
	status, ph, errs := upload(t, w.srv, companyA, map[string]any{"itemId": itemID, "photoId": photoID}, jpg, preflight)
	if status != http.StatusOK || len(errs) > 0 || ph.ID != photoID || ph.SHA256 != hex.EncodeToString(sum[:]) ||
		ph.StorageReference != photoID+".jpg" || ph.ContentType != "image/jpeg" || ph.URL == "" {
		t.Fatalf("addItemPhoto: HTTP %d %+v %+v", status, ph, errs)
	}
	// A phone's retry of the same photo: the same record, nothing more.
	if _, again, errs := upload(t, w.srv, companyA, map[string]any{"itemId": itemID, "photoId": photoID}, jpg, preflight); len(errs) > 0 || again.ID != photoID {
		t.Errorf("the same photo again: %+v %+v", again, errs)
	}
	// The update keeps the photographed item (its id given) and its photo.
	rooms := []any{map[string]any{"id": made.Environments[0].ID, "name": "Sala principal", "items": []any{
		map[string]any{"id": itemID, "name": "Puerta", "materialId": w.materials[0], "rating": 4, "description": "Rayón leve"},
	}}}
	changed, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": made.Version, "environments": rooms})
	if len(errs) > 0 || len(changed.Environments) != 1 || len(changed.Environments[0].Items[0].Photos) != 1 {
		t.Fatalf("updateInventory: %+v %+v; want one room whose item keeps its photo", changed, errs)
	}
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez", "remote": true, "expectedVersion": changed.Version}); len(errs) > 0 {
		t.Fatal(errs)
	}
	both, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez"})
	if len(errs) > 0 || !both.IsSigned || both.PDFSha256 == nil {
		t.Fatalf("signInventory OWNER: %+v %+v", both, errs)
	}

	company := http.Header{"X-Company-Id": {companyA}}
	res, pdf := w.srv.Get(t, "/inventory/download-pdf/"+made.ID, company)
	pdfSum := sha256.Sum256(pdf)
	if res.StatusCode != http.StatusOK || !bytes.HasPrefix(pdf, []byte("%PDF-")) || hex.EncodeToString(pdfSum[:]) != *both.PDFSha256 {
		t.Fatalf("A2: HTTP %d, %d bytes; want the PDF recorded at signing", res.StatusCode, len(pdf))
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Log("pdftotext (poppler-utils) is not installed: the PDF's text is not checked")
	} else {
		cmd := exec.Command("pdftotext", "-layout", "-", "-")
		cmd.Stdin = bytes.NewReader(pdf)
		text, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Ana Gómez", "Luis Pérez", *both.ApprovalCode, ph.SHA256} {
			if !strings.Contains(string(text), want) {
				t.Errorf("the signed PDF does not say %q:\n%s", want, text)
			}
		}
	}

	var b2 struct {
		Data struct {
			IsSigned       bool    `json:"isSigned"`
			IsRemoteSigned bool    `json:"isRemoteSigned"`
			ApprovalCode   *string `json:"approvalCode"`
			Stats          struct {
				TotalItems int `json:"totalItems"`
			} `json:"stats"`
		} `json:"data"`
	}
	res, body := w.srv.Get(t, "/api/v1/inventories/details?"+url.Values{"InventoryId": {made.ID}, "x-company-id": {companyA}}.Encode(), nil)
	if err := json.Unmarshal(body, &b2); err != nil || res.StatusCode != http.StatusOK || !b2.Data.IsSigned || !b2.Data.IsRemoteSigned ||
		b2.Data.ApprovalCode == nil || *b2.Data.ApprovalCode != *both.ApprovalCode || b2.Data.Stats.TotalItems != 1 {
		t.Errorf("B2: HTTP %d %s; want it signed, remotely, with its code", res.StatusCode, body)
	}
	var a3 struct {
		Photos []struct {
			Sha256 string `json:"Sha256"`
			URL    string `json:"Url"`
		} `json:"Photos"`
	}
	res, body = w.srv.Get(t, "/inventory/download-photos/itemDiagnostic/"+itemID, company)
	if err := json.Unmarshal(body, &a3); err != nil || res.StatusCode != http.StatusOK || len(a3.Photos) != 1 || a3.Photos[0].Sha256 != ph.SHA256 {
		t.Fatalf("A3: HTTP %d %s; want the item's photo", res.StatusCode, body)
	}
	u, _ := url.Parse(a3.Photos[0].URL)
	if res, got := w.srv.Get(t, u.RequestURI(), nil); res.StatusCode != http.StatusOK || !bytes.Equal(got, jpg) {
		t.Errorf("the photo's URL: HTTP %d, %d bytes; want the JPEG sent", res.StatusCode, len(got))
	}
	// Signed: its photos stay.
	if _, _, errs := upload(t, w.srv, companyA, map[string]any{"itemId": itemID}, jpg, preflight); !refused(errs, "CONFLICT", "") {
		t.Errorf("a photo of a signed inventory: %+v; want CONFLICT", errs)
	}
	if errs := w.srv.GraphQL(t, companyA, `mutation($id: ID!) { removeItemPhoto(photoId: $id) { photoId } }`, map[string]any{"id": photoID}).Errors; !refused(errs, "CONFLICT", "") {
		t.Errorf("removing a photo of a signed inventory: %+v; want CONFLICT", errs)
	}
}

// TestMultipartOperationsAreBoundedAsAJSONBody: the operations and map parts
// of a multipart request are held to a JSON body's bound (MaxRequestBytes),
// only file parts may be larger: a 20 MB item description was once taken
// this way. Just under the bound, the request is served as sent.
func TestMultipartOperationsAreBoundedAsAJSONBody(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	item, before := made.Environments[0].Items[0].ID, w.count(t)
	ops, _ := json.Marshal(map[string]any{"query": addPhotoMutation, "variables": map[string]any{"itemId": item, "file": nil}, "operationName": "AddPhoto"})
	fileMap := `{"0": ["variables.file"]}`
	huge := strings.Repeat("x", 20<<20)
	create, _ := json.Marshal(map[string]any{"query": createMutation, "variables": map[string]any{"input": map[string]any{
		"propertyId": w.property, "inventoryType": "COLOCACION", "rentalPrice": "1.00",
		"environments": []any{map[string]any{"name": "Sala", "description": huge}}}}})
	padding := func(n int) string { return string(ops[:len(ops)-1]) + strings.Repeat(" ", n) + "}" }
	for _, tc := range []struct {
		name, operations, fileMap, field string
	}{
		{"a createInventory of a 20 MB description", string(create), fileMap, "operations"},
		{"operations one byte over", padding(graphqlhttp.MaxRequestBytes - len(ops) + 1), fileMap, "operations"},
		{"a map over what is left", padding(graphqlhttp.MaxRequestBytes - len(ops) - 10), `{"0": ["variables.file"]}` + strings.Repeat(" ", 100), "map"},
	} {
		status, _, errs := sendMultipart(t, w.srv, companyA, tc.operations, tc.fileMap, aJPEG(t), preflight)
		if status != http.StatusRequestEntityTooLarge || len(errs) != 1 || errs[0].Code() != "QUERY_TOO_LARGE" || errs[0].Extensions["field"] != tc.field {
			t.Errorf("%s: HTTP %d %+v; want 413 QUERY_TOO_LARGE on %s", tc.name, status, errs, tc.field)
		}
	}
	// Just under: the parts read to bound them are replayed to the
	// transport, whose photo is then taken as sent.
	jpg := aJPEG(t)
	status, photo, errs := sendMultipart(t, w.srv, companyA, padding(graphqlhttp.MaxRequestBytes-len(ops)-len(fileMap)), fileMap, jpg, preflight)
	sum := sha256.Sum256(jpg)
	if status != 200 || len(errs) > 0 || photo.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("operations and map at the bound: HTTP %d %+v, photo %+v; want the photo taken whole", status, errs, photo)
	}
	if n := w.count(t); n != before {
		t.Errorf("inventories: %d, want %d: a refused createInventory wrote", n, before)
	}
}

func TestPhotosRefusedLeaveNothing(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 2))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mine := made.Environments[0].Items[0].ID
	ctxB := tenant.WithCompany(context.Background(), datagen.DemoCompanies[1])
	theirs, err := w.st.Client.Item.Query().First(ctxB)
	if err != nil {
		t.Fatal(err)
	}
	jpg := aJPEG(t)
	fake := append(bytes.Clone(jpg[:200]), bytes.Repeat([]byte{0x42}, 3000)...)
	for _, tc := range []struct {
		name        string
		item        string
		file        []byte
		header      http.Header
		status      int
		code, field string
	}{
		{"text named .jpg", mine, []byte("not a photo at all"), preflight, 200, "INVALID_ARGUMENT", "file"},
		{"a fake JPEG", mine, fake, preflight, 200, "INVALID_ARGUMENT", "file"},
		{"another company's item", theirs.ID.String(), jpg, preflight, 200, "NOT_FOUND", "itemId"},
		{"without a preflight header", mine, jpg, nil, 400, "INVALID_ARGUMENT", ""},
		{"with Apollo's operation name header", mine, jpg, http.Header{"X-Apollo-Operation-Name": {"AddPhoto"}}, 200, "", ""},
	} {
		status, _, errs := upload(t, w.srv, companyA, map[string]any{"itemId": tc.item}, tc.file, tc.header)
		if tc.code == "" {
			if status != 200 || len(errs) > 0 {
				t.Errorf("%s: HTTP %d %+v; want the photo taken", tc.name, status, errs)
			}
			continue
		}
		if status != tc.status || !refused(errs, tc.code, tc.field) {
			t.Errorf("%s: HTTP %d %+v; want %d %s on %q", tc.name, status, errs, tc.status, tc.code, tc.field)
		}
	}
	// A server that takes photos of fewer bytes than this one: refused as
	// the photo streams, and before when the body says its length.
	small := apitest.NewServerLogging(t, w.st, server.Options{Files: apitest.Files(t), MaxPhotoBytes: int64(len(jpg) - 1)}, w.log.Logger(slog.LevelInfo))
	if status, _, errs := upload(t, small, companyA, map[string]any{"itemId": mine}, jpg, preflight); status != 200 || !refused(errs, "INVALID_ARGUMENT", "file") {
		t.Errorf("a photo over the bound: HTTP %d %+v; want INVALID_ARGUMENT on file", status, errs)
	}
	if status, _, errs := upload(t, small, companyA, map[string]any{"itemId": mine}, bytes.Repeat(jpg, 2000), preflight); status != http.StatusRequestEntityTooLarge || !refused(errs, "INVALID_ARGUMENT", "file") {
		t.Errorf("a body over the bound: HTTP %d %+v; want 413 INVALID_ARGUMENT on file", status, errs)
	}
	n, err := w.st.Client.Photo.Query().Where(photo.ItemID(uuid.MustParse(mine))).Count(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]))
	if err != nil || n != 1 {
		t.Errorf("%d photos recorded (%v); want only the one taken", n, err)
	}
	// Removed: the item is answered without it; removed again, NOT_FOUND.
	ph, err := w.st.Client.Photo.Query().Where(photo.ItemID(uuid.MustParse(mine))).Only(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]))
	if err != nil {
		t.Fatal(err)
	}
	const remove = `mutation($id: ID!) { removeItemPhoto(photoId: $id) { photoId item { id photos { id } } } }`
	res := w.srv.GraphQL(t, companyA, remove, map[string]any{"id": ph.ID.String()})
	if len(res.Errors) > 0 || !strings.Contains(string(res.Data), `"photos":[]`) {
		t.Errorf("removeItemPhoto: %s %+v", res.Data, res.Errors)
	}
	if errs := w.srv.GraphQL(t, companyA, remove, map[string]any{"id": ph.ID.String()}).Errors; !refused(errs, "NOT_FOUND", "photoId") {
		t.Errorf("removing it again: %+v; want NOT_FOUND", errs)
	}
	// Half signed: no photo comes or goes.
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, _, errs := upload(t, w.srv, companyA, map[string]any{"itemId": mine}, jpg, preflight); !refused(errs, "CONFLICT", "id") {
		t.Errorf("a photo of a half-signed inventory: %+v; want CONFLICT", errs)
	}
}
