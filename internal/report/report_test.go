package report_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// thumb is the thumbnail of a small photo of this shade.
func thumb(t testing.TB, shade uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for x := range 64 {
		img.Set(x, x%48, color.RGBA{shade, 90, 160, 255})
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	data, err := thumbnail.Make(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// inventory is a signed inventory of rooms x items, two photos an item.
func inventory(t *testing.T, rooms, items int) report.Inventory {
	signed := time.Date(2025, 3, 4, 15, 0, 0, 0, time.UTC)
	inv := report.Inventory{ID: "6b75bc7a-5278-4540-ba4f-3bcf0e345005", TypeName: "desocupación", RentalPrice: "1500000.00", Currency: "COP",
		CreatedAt: signed.Add(-48 * time.Hour), AgentSigned: signed.Add(-time.Hour), OwnerSigned: signed, SignatureDate: signed,
		ApprovalCode: "APR-123456", RemoteSigned: true, PropertyCode: "INM-0007", Address: "Calle 5 # 10-20", City: "Cali"}
	for r := range rooms {
		env := report.Environment{Name: fmt.Sprintf("Habitación %d", r+1), Level: 1}
		for i := range items {
			it := report.Item{Name: fmt.Sprintf("Elemento %d", i+1), Material: "Madera", Rating: 1 + i%5, ToRepair: i%5 < 2,
				Description: "Desgaste por uso"}
			for p := range 2 {
				ref := fmt.Sprintf("r%d-i%d-p%d.jpg", r, i, p)
				it.Photos = append(it.Photos, report.Photo{Reference: ref, SHA256: fmt.Sprintf("%064x", r*1000+i*10+p), Thumbnail: thumb(t, uint8(r*40+i*3+p))})
			}
			env.Items = append(env.Items, it)
		}
		inv.Environments = append(inv.Environments, env)
	}
	return inv
}

// The same inventory renders to the same bytes, photos and all (a stored
// PDF's SHA-256 is its record's), and the report says what a signed
// document must: rooms as tables, the signature block, the page count, and
// each embedded photo's SHA-256.
func TestReportsAreStableAndSayWhatWasSigned(t *testing.T) {
	inv := inventory(t, 6, 12)
	inv.CompanyName, inv.Deposit = "Inmobiliaria Los Andes S.A.S.", "1800000.50"
	first, err := report.Render(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := report.Render(context.Background(), inv)
		if err != nil || !bytes.Equal(first, again) {
			t.Fatal("the same inventory rendered to different bytes")
		}
	}
	// A draft (not signed yet) too, rendered seconds apart: the SHA-256 a
	// signer's page shows must be that of the draft their signature finds.
	draft := inventory(t, 1, 2)
	draft.SignatureDate, draft.ApprovalCode = time.Time{}, ""
	before, err := report.Render(context.Background(), draft)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past the PDF dates' second
	if after, err := report.Render(context.Background(), draft); err != nil || !bytes.Equal(before, after) {
		t.Fatal("the same draft rendered a second later to different bytes")
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: .ci/run installs it")
	}
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(first)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"Inventario de desocupación", "Elemento Material Calificación Reparar Comentario",
		"Elemento 3 Madera 3/5 no", "Firma del agente: 2025-03-04 09:00 America/Bogota (2025-03-04 14:00 UTC)",
		"Firma del propietario: 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC)",
		"Fecha de firma: 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC) (firma remota)",
		"Calificación de 1 a 5: 1 = muy malo; 2 = malo; 3 = regular; 4 = bueno; 5 = muy bueno. Reparar \"sí\", en una fila sombreada de rojo: el elemento debe repararse.", "Código de aprobación: APR-123456", "Agente Propietario",
		"INM-0007 Calle 5 # 10-20, Cali", "página 1 de", "Inmobiliaria Los Andes S.A.S. Inventario de desocupación", "Depósito: $ 1.800.000,50 COP", "r5-i11-p1.jpg " + fmt.Sprintf("%064x", 5*1000+11*10+1)} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	pages := strings.Count(text, "página ")
	if last := fmt.Sprintf("página %d de %d", pages, pages); pages < 2 || !strings.Contains(text, last) {
		t.Errorf("%d pages, the last not numbered %q", pages, last)
	}
}

// An inventory signed through the API names its signers: on each party's
// line and under each signature line.
func TestReportsNameTheirSigners(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: .ci/run installs it")
	}
	inv := inventory(t, 1, 1)
	inv.AgentName, inv.OwnerName = "Ana Gómez", "Luis Pérez"
	data, err := report.Render(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"Firma del agente: Ana Gómez, 2025-03-04 09:00 America/Bogota (2025-03-04 14:00 UTC)",
		"Firma del propietario: Luis Pérez, 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC)",
		"Agente: Ana Gómez Propietario: Luis Pérez"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
}

// Times are in the report's zone beside UTC (the default zone when none is
// given); set to UTC, in UTC alone.
func TestReportTimesAreInTheirZoneAndUTC(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: .ci/run installs it")
	}
	for _, tc := range []struct {
		zone string
		want string
	}{
		{"America/Bogota", "Fecha de firma: 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC)"},
		{"Europe/Madrid", "Fecha de firma: 2025-03-04 16:00 Europe/Madrid (2025-03-04 15:00 UTC)"},
		{"UTC", "Fecha de firma: 2025-03-04 15:00 UTC (firma remota)"},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		inv := inventory(t, 1, 1)
		inv.Zone = loc
		data, err := report.Render(context.Background(), inv)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("pdftotext", "-layout", "-", "-")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(strings.Fields(string(out)), " "); !strings.Contains(text, tc.want) {
			t.Errorf("%s: the report lacks %q", tc.zone, tc.want)
		}
	}
}

// A render whose context has ended returns its error and no document, for
// either report: a cut render is never half a PDF.
func TestRenderingStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inv := inventory(t, 2, 3)
	if data, err := report.Render(ctx, inv); !errors.Is(err, context.Canceled) || data != nil {
		t.Errorf("Render: %d bytes, %v; want none and context.Canceled", len(data), err)
	}
	c := report.Comparison{Property: "INM-0007", From: report.Side{ID: inv.ID}, To: report.Side{ID: inv.ID},
		Environments: []report.ComparedRoom{{Name: "Sala", Items: []report.ComparedItem{{Name: "Piso", FromPhotos: inv.Environments[0].Items[0].Photos}}}}}
	if data, err := report.RenderComparison(ctx, c); !errors.Is(err, context.Canceled) || data != nil {
		t.Errorf("RenderComparison: %d bytes, %v; want none and context.Canceled", len(data), err)
	}
}

// A photo without a thumbnail is a frame saying why, and its SHA-256 is
// still listed; a "thumbnail" that is really a large photo is not decoded.
func TestPhotosNotShownSayWhy(t *testing.T) {
	inv := inventory(t, 1, 1)
	big := image.NewRGBA(image.Rect(0, 0, 800, 600))
	var original bytes.Buffer
	if err := jpeg.Encode(&original, big, nil); err != nil {
		t.Fatal(err)
	}
	photos := inv.Environments[0].Items[0].Photos
	photos[0].Thumbnail, photos[0].NotShown = nil, "archivo no encontrado"
	photos[1].Thumbnail = original.Bytes()
	data, err := report.Render(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: .ci/run installs it")
	}
	cmd := exec.Command("pdftotext", "-", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"foto no mostrada: archivo no encontrado", "foto no mostrada: miniatura no válida",
		"r0-i0-p0.jpg " + fmt.Sprintf("%064x", 0)} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
}

// Each signature's line says how that party signed: remotely from a link,
// remotely through the service, or in person; the signature date no
// longer says "(firma remota)" for them all. An imported record, which
// knows only that the inventory was signed remotely, still says so there.
func TestEachSignatureSaysWhetherItWasRemote(t *testing.T) {
	needPoppler(t)
	inv := inventory(t, 1, 1)
	inv.Required = []string{"AGENT", "OWNER", "TENANT"}
	inv.AgentName, inv.OwnerName, inv.TenantName = "Ana Gómez", "Luis Pérez", "Marta Ruiz"
	inv.TenantSigned = inv.OwnerSigned
	inv.Certificate = []report.Attestation{
		{Party: "AGENT", Name: "Ana Gómez", Method: "LINK", Remote: true, At: inv.AgentSigned},
		{Party: "OWNER", Name: "Luis Pérez", Method: "CREDENTIAL", At: inv.OwnerSigned},
		{Party: "TENANT", Name: "Marta Ruiz", Method: "CREDENTIAL", Remote: true, At: inv.TenantSigned},
	}
	data, err := report.Render(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	text := layoutText(t, pdfFile(t, data))
	for _, want := range []string{
		"Firma del agente: Ana Gómez, 2025-03-04 09:00 America/Bogota (2025-03-04 14:00 UTC), firma remota desde un enlace",
		"Firma del propietario: Luis Pérez, 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC), firma en persona",
		"Firma del arrendatario: Marta Ruiz, 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC), firma remota Fecha de firma",
		"Fecha de firma: 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC) Código de aprobación",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}

	imported := inventory(t, 1, 1) // remote, and no certificate
	data, err = report.Render(context.Background(), imported)
	if err != nil {
		t.Fatal(err)
	}
	text = layoutText(t, pdfFile(t, data))
	for _, want := range []string{"Firma del agente: 2025-03-04 09:00 America/Bogota (2025-03-04 14:00 UTC) Firma del propietario",
		"Fecha de firma: 2025-03-04 10:00 America/Bogota (2025-03-04 15:00 UTC) (firma remota)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the imported record's report lacks %q:\n%s", want, text)
		}
	}
}

// Each photo is captioned right under itself with its number, the first
// characters of its SHA-256, its room and its item, and the photo list at
// the end names it the same way beside its whole SHA-256: a printed photo
// is matched to its file on any page. Read back with pdftotext -bbox, and
// the pages rendered (pdftoppm) to see the photo above each caption.
func TestEachPhotoIsCaptionedAsThePhotoListNamesIt(t *testing.T) {
	needPoppler(t)
	inv := inventory(t, 3, 9)
	digests := map[string]string{} // reference → SHA-256
	for _, env := range inv.Environments {
		for _, it := range env.Items {
			for i := range it.Photos {
				sum := sha256.Sum256([]byte(it.Photos[i].Reference))
				it.Photos[i].SHA256 = hex.EncodeToString(sum[:])
				digests[it.Photos[i].Reference] = it.Photos[i].SHA256
			}
		}
	}
	data, err := report.Render(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	file := pdfFile(t, data)

	// The list: "Foto 7 Habitación 1 · Elemento 4 r0-i3-p0.jpg <SHA-256>".
	type listed struct{ place, reference, digest string }
	list := map[string]listed{}
	for _, m := range regexp.MustCompile(`Foto (\d+) ([^·]+ · .+?) (r\d+-i\d+-p\d+\.jpg) ([0-9a-f]{64})`).FindAllStringSubmatch(layoutText(t, file), -1) {
		list[m[1]] = listed{m[2], m[3], m[4]}
	}
	if len(list) != len(digests) {
		t.Fatalf("the photo list names %d photos, want %d", len(list), len(digests))
	}
	for n, l := range list {
		if digests[l.reference] != l.digest {
			t.Errorf("Foto %s: listed with %s, its SHA-256 is %s", n, l.digest, digests[l.reference])
		}
	}

	// The captions: "Foto 7 · 1a2b3c4d" over "Habitación 1 · Elemento 4".
	all := words(t, file)
	images := map[int]image.Image{}
	captions := 0
	for i := 0; i+3 < len(all); i++ {
		w := all[i]
		if w.text != "Foto" || all[i+2].text != "·" || !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(all[i+3].text) {
			continue
		}
		captions++
		n, start := all[i+1].text, all[i+3].text
		l, ok := list[n]
		switch {
		case !ok:
			t.Errorf("caption %v: Foto %s is not in the photo list", w, n)
			continue
		case !strings.HasPrefix(l.digest, start):
			t.Errorf("caption %v: SHA-256 starting %s; the list gives %s", w, start, l.digest)
		}
		// The second line, as wide as the photo (28 mm).
		next := all[i+4]
		if place := line(all, w.page, next.yMin, w.xMin, w.xMin+28*72/25.4); next.yMin <= w.yMin || place != l.place {
			t.Errorf("caption %v: place %q under it; the list gives %q", w, place, l.place)
		}
		if images[w.page] == nil {
			images[w.page] = pageImage(t, file, w.page)
		}
		if blank(images[w.page], w.xMin+10, w.yMin-10) {
			t.Errorf("caption %v: the page above it is blank, not its photo", w)
		}
	}
	if captions != len(digests) {
		t.Errorf("%d captions, want one a photo (%d)", captions, len(digests))
	}
	if len(images) < 2 {
		t.Errorf("the photos are on %d pages: the test wants them across a page break", len(images))
	}
}

// Money is printed as a person in Colombia writes it, from the decimal's
// text, and the property's type and levels as a sentence would say them.
func TestMoneyAndLevelsReadAsPeopleWriteThem(t *testing.T) {
	needPoppler(t)
	for _, tc := range []struct {
		price, currency, kind string
		levels                int
		want                  []string
	}{
		{"1800000.00", "COP", "Local", 2, []string{"Canon de arrendamiento: $ 1.800.000 COP", "Cali (Local de 2 niveles)"}},
		{"2500000.50", "COP", "Casa", 1, []string{"Canon de arrendamiento: $ 2.500.000,50 COP", "Cali (Casa de 1 nivel)"}},
		{"9999999999999.99", "USD", "Apartamento", 3, []string{"Canon de arrendamiento: $ 9.999.999.999.999,99 USD", "(Apartamento de 3 niveles)"}},
		{"950.00", "EUR", "Bodega", 0, []string{"Canon de arrendamiento: € 950 EUR", "Cali (Bodega)"}},
	} {
		inv := inventory(t, 1, 1)
		inv.RentalPrice, inv.Currency, inv.PropertyType, inv.PropertyLevels = tc.price, tc.currency, tc.kind, tc.levels
		data, err := report.Render(context.Background(), inv)
		if err != nil {
			t.Fatal(err)
		}
		text := layoutText(t, pdfFile(t, data))
		for _, want := range tc.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s %s: the report lacks %q:\n%.600s", tc.price, tc.currency, want, text)
			}
		}
		if strings.Contains(text, "nivel(es)") {
			t.Errorf("%s: the report still says nivel(es)", tc.kind)
		}
	}
}
