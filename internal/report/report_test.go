package report_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os/exec"
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
		"INM-0007 Calle 5 # 10-20, Cali", "página 1 de", "r5-i11-p1.jpg " + fmt.Sprintf("%064x", 5*1000+11*10+1)} {
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
