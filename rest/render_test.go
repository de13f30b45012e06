package rest_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/signedpdf"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// noisyJPEG is a w×h photo as a camera takes one: a scene (a gradient)
// under sensor noise, which is what makes a photo's JPEG large and slow to
// decode.
func noisyJPEG(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for y := range h {
		for x := range w {
			img.Y[y*img.YStride+x] = uint8(x*160/w+y*60/h) + uint8(rng.IntN(24))
		}
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = uint8(110+i%40), uint8(125+i%20)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// variant is data, a JPEG, made a distinct file (its own SHA-256) without
// changing a pixel: a comment after its start marker. A photo encoded once
// serves as many photos, each to be decoded on its own.
func variant(data []byte, n int) []byte {
	comment := fmt.Sprintf("photo %d", n)
	segment := []byte{0xFF, 0xFE, byte((len(comment) + 2) >> 8), byte(len(comment) + 2)}
	return slices.Concat(data[:2], segment, []byte(comment), data[2:])
}

// claimingSize is data, a baseline JPEG, whose header says w×h instead.
func claimingSize(tb testing.TB, data []byte, w, h int) []byte {
	tb.Helper()
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	if i < 0 {
		tb.Fatal("no SOF0 marker")
	}
	out := bytes.Clone(data)
	out[i+5], out[i+6], out[i+7], out[i+8] = byte(h>>8), byte(h), byte(w>>8), byte(w)
	return out
}

// photosOf are the photos of the inventories, in a fixed order.
func photosOf(tb testing.TB, client *ent.Client, inventories ...uuid.UUID) []*ent.Photo {
	tb.Helper()
	ctx := tenant.Unrestricted(context.Background(), "test: the fixture's photos")
	photos, err := client.Photo.Query().
		Where(photo.HasItemWith(item.HasEnvironmentWith(environment.InventoryIDIn(inventories...)))).
		Order(photo.ByID()).All(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return photos
}

// storePhotos stores data(i) as the i-th photo and records its SHA-256, as
// an import does; data(i) nil leaves that photo without a file.
func storePhotos(tb testing.TB, client *ent.Client, fs *files.Store, photos []*ent.Photo, data func(i int) []byte) {
	tb.Helper()
	ctx := tenant.Unrestricted(context.Background(), "test: storing the fixture's photos")
	for i, p := range photos {
		d := data(i)
		if d == nil {
			continue
		}
		key, err := files.PhotoKey(p.StorageReference)
		if err != nil {
			tb.Fatal(err)
		}
		sum, err := fs.Put(ctx, key, d)
		if err != nil {
			tb.Fatal(err)
		}
		if err := client.Photo.UpdateOneID(p.ID).SetSha256(sum).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
}

// undated is a PDF without its creation and modification dates: those of a
// comparison of inventories not yet signed are the time it was rendered.
func undated(pdf []byte) []byte {
	return regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]+\)`).ReplaceAll(pdf, nil)
}

func comparisonPDF(from, to, company uuid.UUID) string {
	return "/api/v1/inventories/comparison/pdf" + query("from", from.String(), "to", to.String(), "x-company-id", company.String())
}

// A comparison PDF decodes each photo once, on its first render, and keeps
// its thumbnail: rendered again it decodes no original, nor reads one (here
// replaced by junk), and is the same bytes.
func TestB4ComparisonPDFDecodesEachPhotoOnce(t *testing.T) {
	st := testdb.Open(t)
	fs := apitest.Files(t)
	company := uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	a := withDocument(t, apitest.NewServer(t, st, fs))
	photos := photosOf(t, st.Client, moveIn, moveOut)
	original := noisyJPEG(t, 640, 480)
	storePhotos(t, st.Client, fs, photos, func(i int) []byte { return variant(original, i) })

	before := thumbnail.OriginalsDecoded()
	first := a.get(t, comparisonPDF(moveIn, moveOut, company))
	if first.status != http.StatusOK {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	if got := thumbnail.OriginalsDecoded() - before; got != int64(len(photos)) {
		t.Errorf("first render: %d originals decoded, want %d (one per photo)", got, len(photos))
	}
	for i, p := range photos {
		key, _ := files.PhotoKey(p.StorageReference)
		if _, err := fs.Put(context.Background(), key, []byte(fmt.Sprintf("not a photo any more %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	before = thumbnail.OriginalsDecoded()
	again := a.get(t, comparisonPDF(moveIn, moveOut, company))
	same := bytes.Equal(undated(again.body), undated(first.body))
	if again.status != http.StatusOK || !same {
		t.Errorf("again: %d, same bytes %v; want 200 and the first render's bytes", again.status, same)
	}
	if got := thumbnail.OriginalsDecoded() - before; got != 0 {
		t.Errorf("second render: %d originals decoded, want 0", got)
	}
	if text := pdfText(t, first.body); strings.Contains(text, "no mostrada") {
		t.Errorf("a photo was not shown:\n%.2000s", text)
	}
}

// A photo that cannot be shown leaves the report whole: its place says why
// (over 50 megapixels, refused from its header and never decoded; not an
// image; missing), and its SHA-256 is still listed, so the original can be
// produced on its own. A landlord in a dispute needs the report of every
// item and rating more than any one picture.
func TestB4ComparisonPDFShowsWhyAPhotoIsNotShown(t *testing.T) {
	st := testdb.Open(t)
	fs := apitest.Files(t)
	company := uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	a := withDocument(t, apitest.NewServer(t, st, fs))
	photos := photosOf(t, st.Client, moveIn, moveOut)
	// The photos that cannot be shown go on items that changed: the
	// comparison collapses unchanged items into a line, without photos.
	ctx := tenant.Unrestricted(context.Background(), "test: the fixture's items")
	unchanged := func(p *ent.Photo) int { // the fixture's: Puerta, Cama, and the window rated 4 on both sides
		it := p.QueryItem().OnlyX(ctx)
		return btoi(it.Name == "Puerta" || it.Name == "Cama" || strings.EqualFold(it.Name, "ventana") && it.Rating == 4)
	}
	slices.SortStableFunc(photos, func(a, b *ent.Photo) int { return cmp.Compare(unchanged(a), unchanged(b)) })
	small := noisyJPEG(t, 160, 120)
	bomb := claimingSize(t, small, 30000, 30000)
	storePhotos(t, st.Client, fs, photos, func(i int) []byte {
		switch i {
		case 0:
			return bomb
		case 1:
			return []byte("a text file under a photo's name")
		case 2:
			return nil
		}
		return variant(small, i)
	})

	before := thumbnail.OriginalsDecoded()
	res := a.get(t, comparisonPDF(moveIn, moveOut, company))
	if res.status != http.StatusOK {
		t.Fatalf("%d %s, want 200", res.status, res.body)
	}
	if got, want := thumbnail.OriginalsDecoded()-before, int64(len(photos)-3); got != want {
		t.Errorf("%d originals decoded, want %d: the bomb, the junk and the missing one are not", got, want)
	}
	flat := strings.Join(strings.Fields(pdfText(t, res.body)), " ")
	bombSum := st.Client.Photo.GetX(ctx, photos[0].ID).Sha256
	for _, want := range []string{"foto no mostrada: 30000×30000 píxeles, más de los 50 megapíxeles que se procesan",
		"foto no mostrada: no es una imagen legible", "Piso en Sala", photos[0].StorageReference + " " + *bombSum} {
		if !strings.Contains(flat, want) {
			t.Errorf("the comparison PDF lacks %q:\n%.3000s", want, flat)
		}
	}
	// The one without a file has no recorded digest, and says so.
	if !strings.Contains(flat, photos[2].StorageReference+" (no registrado)") {
		t.Errorf("the missing photo is not listed:\n%.3000s", flat)
	}
}

// A render that runs past the request's deadline (here: photos of 6
// megapixels, none with a thumbnail yet, and a deadline of 250 ms) stops
// promptly and answers 504 DEADLINE_EXCEEDED in the REST error body; the
// access log says 504, never 200. The thumbnails it made are kept, so a
// retry goes further.
func TestB4ComparisonPDFPastItsDeadlineIs504(t *testing.T) {
	st := testdb.Open(t)
	fs := apitest.Files(t)
	company := uuid.New()
	moveIn, moveOut := apitest.LargeComparisonFixture(t, st.Client, company, 2, 6)
	logs := &apitest.LogBuffer{}
	const deadline = 250 * time.Millisecond
	srv := apitest.NewServerLogging(t, st, server.Options{Files: fs, RequestTimeout: deadline, AccessLog: "info"}, logs.Logger(slog.LevelInfo))
	a := withDocument(t, srv)
	photos := photosOf(t, st.Client, moveIn, moveOut)
	original := noisyJPEG(t, 3000, 2000)
	storePhotos(t, st.Client, fs, photos, func(i int) []byte { return variant(original, i) })
	logs.Take(t)

	start := time.Now()
	res := a.get(t, comparisonPDF(moveIn, moveOut, company))
	took := time.Since(start)
	var body struct {
		Success bool
		Error   struct{ Code string }
	}
	if err := json.Unmarshal(res.body, &body); err != nil || res.status != http.StatusGatewayTimeout || body.Error.Code != "DEADLINE_EXCEEDED" {
		t.Fatalf("got %d %.300s, want 504 DEADLINE_EXCEEDED", res.status, res.body)
	}
	// Promptly: a decode stops within a few KB of the deadline. The slack
	// is for -race, which slows decoding tenfold.
	if took > deadline+3*time.Second {
		t.Errorf("answered %s after a deadline of %s", took.Round(time.Millisecond), deadline)
	}
	var statuses []float64
	for _, line := range logs.Take(t) {
		if line["msg"] == "http request" && strings.HasSuffix(fmt.Sprint(line["path"]), "/comparison/pdf") {
			statuses = append(statuses, line["status"].(float64))
		}
	}
	if !slices.Equal(statuses, []float64{http.StatusGatewayTimeout}) {
		t.Errorf("access log statuses %v, want [504]", statuses)
	}
}

// TestA2PastItsDeadlineIs503WhileTheRenderingGoesOn: a signed PDF never
// kept is made in the background, once: a first A2 that cannot wait for it
// (photos of 6 megapixels without thumbnails, a deadline of 250 ms) is 503
// with Retry-After, not 504, and the same rendering goes on to keep it; the
// downloads after are served the kept file. Requests that come meanwhile
// share that one rendering.
func TestA2PastItsDeadlineIs503WhileTheRenderingGoesOn(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	fs := apitest.Files(t)
	// A rendering's budget, and the wait for it below, past what the race
	// detector makes of the 5 s this takes without it.
	const renderBudget = 90 * time.Second
	a := withDocument(t, apitest.NewServerWith(t, st, server.Options{Files: fs, RequestTimeout: 250 * time.Millisecond,
		PDFRendering: signedpdf.RenderingOptions{Budget: renderBudget}}))
	ctx := tenant.Unrestricted(context.Background(), "test: a signed inventory with photos")
	inv, err := st.Client.Inventory.Query().
		Where(inventory.IsSigned(true), inventory.HasEnvironmentsWith(environment.HasItemsWith(item.HasPhotos()))).
		Order(inventory.ByID()).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	photos := photosOf(t, st.Client, inv.ID)
	if len(photos) < 8 { // each takes over 100 ms to decode: together, well past the deadline
		t.Fatalf("%d photos, want 8 or more", len(photos))
	}
	// Under the race detector a sixth of the pixels: still past the
	// deadline together, and within the rendering's budget.
	width, height := 3000, 2000
	if raceDetector {
		width, height = 1200, 800
	}
	original := noisyJPEG(t, width, height)
	storePhotos(t, st.Client, fs, photos, func(i int) []byte { return variant(original, i) })
	logs := captureDefaultLog(t, slog.LevelInfo)

	var wg sync.WaitGroup
	first := make([]response, 3)
	for i := range first {
		wg.Go(func() { first[i] = a.get(t, "/inventory/download-pdf/"+inv.ID.String()) })
	}
	wg.Wait()
	for _, res := range first {
		if code, _ := errorOf(t, res); res.status != http.StatusServiceUnavailable || code != "UNAVAILABLE" || res.header.Get("Retry-After") == "" {
			t.Fatalf("A2 of a PDF that takes longer than the deadline: %d %q %.300s, want 503 UNAVAILABLE with Retry-After", res.status, res.header.Get("Retry-After"), res.body)
		}
	}
	var served response
	for deadline := time.Now().Add(renderBudget); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if served = a.get(t, "/inventory/download-pdf/"+inv.ID.String()); served.status == http.StatusOK {
			break
		}
	}
	if served.status != http.StatusOK || !bytes.HasPrefix(served.body, []byte("%PDF-")) {
		t.Fatalf("A2 once the rendering is done: %d %.200s, want the PDF", served.status, served.body)
	}
	after, err := st.Client.Inventory.Get(ctx, inv.ID)
	if err != nil || after.PdfSha256 == nil {
		t.Errorf("the PDF's digest after the rendering: %v, %v; want it recorded", after, err)
	}
	renderings := 0
	for _, l := range auditLines(logs.Take(t)) {
		if l["reason"] == "signed PDF: rendering it in the background" {
			renderings++
		}
	}
	if renderings != 1 {
		t.Errorf("renderings for 3 downloads at once and those after: %d, want 1", renderings)
	}
}

// TestAFailedRenderingIsTriedAgainInTheBackgroundNeverOnARequest: a
// rendering that runs out of its budget is 503 with Retry-After, and is
// tried again by itself with backoff; requests meanwhile do not render.
func TestAFailedRenderingIsTriedAgainInTheBackgroundNeverOnARequest(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	a := withDocument(t, apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t),
		PDFRendering: signedpdf.RenderingOptions{Budget: time.Nanosecond}}))
	ctx := tenant.Unrestricted(context.Background(), "test: a signed inventory")
	inv, err := st.Client.Inventory.Query().Where(inventory.IsSigned(true)).Order(inventory.ByID()).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logs := captureDefaultLog(t, slog.LevelInfo)
	attempts := func() int {
		return strings.Count(logs.String(), `"reason":"signed PDF: rendering it in the background"`)
	}
	for range 5 {
		res := a.get(t, "/inventory/download-pdf/"+inv.ID.String())
		if code, _ := errorOf(t, res); res.status != http.StatusServiceUnavailable || code != "UNAVAILABLE" || res.header.Get("Retry-After") == "" {
			t.Fatalf("A2 of a PDF whose rendering fails: %d %q %.300s, want 503 UNAVAILABLE with Retry-After", res.status, res.header.Get("Retry-After"), res.body)
		}
	}
	if n := attempts(); n != 1 {
		t.Errorf("renderings after 5 downloads of a PDF whose rendering failed: %d, want 1 (requests never render)", n)
	}
	for deadline := time.Now().Add(10 * time.Second); attempts() < 3 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if n := attempts(); n < 3 {
		t.Errorf("renderings 10 s after a failure, with no request: %d, want the background's retries (1 s, then 2 s)", n)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
