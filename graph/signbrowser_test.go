package graph_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/browsertest"
	"github.com/propertyrecords/inventory/internal/drawing"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// TestATenantSignsOnAPhoneInChromium: the whole of issue 36's promise, in
// a real browser at a phone's size. The agent and the owner have signed a
// move-out inventory with a photo; the tenant opens the link in Chromium
// (a Pixel 5: its viewport, touch and user agent), sees the rooms and the
// photo, draws a signature with their finger (touch events, which the pad
// reads as pointer events), types their name, consents and signs. The
// page loads nothing from anywhere else and breaks no rule of its
// Content-Security-Policy; the record keeps the drawing and the draft's
// SHA-256 the page showed; the signed PDF names the tenant and certifies
// the signature, drawn.
func TestATenantSignsOnAPhoneInChromium(t *testing.T) {
	browsertest.Chromium(t) // skipped without it, before the records are made
	w := newLinkWrites(t, server.Options{})
	moveOut := w.tree(uuid.NewString(), 2, 2)
	moveOut["inventoryType"] = "DESOCUPACION"
	moveOut["requiredSignatures"] = []string{"AGENT", "OWNER", "TENANT"}
	made, errs := w.create(t, moveOut)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	status, _, errs := upload(t, w.srv, companyA, map[string]any{"itemId": made.Environments[0].Items[0].ID}, aJPEG(t), preflight)
	if status != http.StatusOK || len(errs) > 0 {
		t.Fatalf("addItemPhoto: HTTP %d %+v", status, errs)
	}
	for party, name := range map[string]string{"AGENT": "Ana Gómez", "OWNER": "Luis Pérez"} {
		if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": party, "signerName": name}); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")

	ctx, browser := browsertest.Start(t, 90*time.Second)

	var shownDigest, photoSrc, title string
	var padVisible bool
	if err := chromedp.Run(ctx,
		chromedp.Emulate(device.Pixel5),
		// A phone in Colombia: the page in Spanish.
		network.SetExtraHTTPHeaders(network.Headers{"Accept-Language": "es-CO,es;q=0.9"}),
		chromedp.Navigate(link.URL),
		chromedp.WaitVisible("#pad", chromedp.ByID),
		chromedp.Title(&title),
		chromedp.Text("#digest", &shownDigest, chromedp.ByID),
		chromedp.AttributeValue(".photos img", "src", &photoSrc, nil, chromedp.ByQuery),
		chromedp.Evaluate(`!document.getElementById("pad-block").hidden`, &padVisible),
		chromedp.ScrollIntoView("#pad", chromedp.ByID),
	); err != nil {
		t.Fatalf("opening the link in Chromium: %v", err)
	}
	if title != "Firma del inventario" || !padVisible || len(shownDigest) != 64 || !strings.HasPrefix(photoSrc, "data:image/jpeg;base64,") {
		t.Fatalf("the page: title %q, pad shown %v, digest %q, photo %.40q", title, padVisible, shownDigest, photoSrc)
	}

	// The signature: an M and a dot, drawn with a finger.
	strokes := [][][2]float64{{{0.1, 0.8}, {0.2, 0.2}, {0.3, 0.6}, {0.4, 0.2}, {0.5, 0.8}}, {{0.75, 0.5}}}
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var box []float64
		if err := chromedp.Evaluate(`(r => [r.left, r.top, r.width, r.height])(document.getElementById("pad").getBoundingClientRect())`, &box).Do(ctx); err != nil {
			return err
		}
		for _, stroke := range strokes {
			touch := func(kind input.TouchType, x, y float64) error {
				points := []*input.TouchPoint{{X: box[0] + x*box[2], Y: box[1] + y*box[3], ID: 1}}
				if kind == input.TouchEnd {
					points = []*input.TouchPoint{}
				}
				return input.DispatchTouchEvent(kind, points).Do(ctx)
			}
			if err := touch(input.TouchStart, stroke[0][0], stroke[0][1]); err != nil {
				return err
			}
			for i := 1; i < len(stroke); i++ { // each segment in small steps, as a finger moves
				for step := 1; step <= 8; step++ {
					f := float64(step) / 8
					x := stroke[i-1][0] + f*(stroke[i][0]-stroke[i-1][0])
					y := stroke[i-1][1] + f*(stroke[i][1]-stroke[i-1][1])
					if err := touch(input.TouchMove, x, y); err != nil {
						return err
					}
				}
			}
			if err := touch(input.TouchEnd, 0, 0); err != nil {
				return err
			}
		}
		return nil
	})); err != nil {
		t.Fatalf("drawing on the pad: %v", err)
	}

	var signedText, drawnPath string
	if err := chromedp.Run(ctx,
		chromedp.SendKeys("#signerName", "Marta Ruiz Díaz", chromedp.ByID),
		chromedp.Click("#consent", chromedp.ByID),
		chromedp.Click("#submit", chromedp.ByID),
		chromedp.WaitVisible("svg.drawn", chromedp.ByQuery),
		chromedp.Text("main", &signedText, chromedp.ByQuery),
		chromedp.AttributeValue("svg.drawn path", "d", &drawnPath, nil, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("signing in Chromium: %v", err)
	}
	if !strings.Contains(signedText, "Inventario firmado") || !strings.HasPrefix(drawnPath, "M") {
		t.Fatalf("after signing the page says %q, shows the drawing %q", signedText, drawnPath)
	}

	for _, u := range browser.Requested() {
		if !strings.HasPrefix(u, w.srv.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page asked for %s: it must ask nothing of any other server", u)
		}
	}
	for _, c := range browser.Complaints() {
		t.Errorf("the browser complained: %s", c)
	}

	// The record: signed by the three, the tenant from the link, with the
	// drawing and the document the page showed.
	got := w.parties(t, made.ID)
	if !got.IsSigned || len(got.Signatures) != 3 {
		t.Fatalf("after the browser signed: %+v; want signed by the three", got)
	}
	tenantSig := got.Signatures[2]
	if tenantSig.Method != "LINK" || !tenantSig.Drawn || tenantSig.DocumentSHA256 == nil || *tenantSig.DocumentSHA256 != shownDigest ||
		tenantSig.SignerName == nil || *tenantSig.SignerName != "Marta Ruiz Díaz" {
		t.Errorf("the tenant's signature: %+v; want LINK, drawn, of the document %s, by Marta Ruiz Díaz", tenantSig, shownDigest)
	}
	inv, err := w.st.Client.Inventory.Query().Where(inventory.ID(uuid.MustParse(made.ID))).
		Only(tenant.Unrestricted(context.Background(), "test: the drawing kept"))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := drawing.Parse(deref(inv.TenantSignatureDrawing))
	if err != nil || len(kept.Strokes) != 2 || len(kept.Strokes[0]) < 20 || len(kept.Strokes[1]) != 1 {
		t.Errorf("the drawing kept: %v (%v); want the two strokes drawn, the first of many points, the second a dot", kept, err)
	}

	text := w.signedPDFText(t, made.ID)
	certificate := text[max(strings.LastIndex(text, "Certificado de firmas"), 0):]
	for _, want := range []string{"Arrendatario: Marta Ruiz Díaz", "Método: desde un enlace de firma enviado a la parte", "Firma dibujada: sí",
		"Navegador: Mozilla/5.0 (Linux; Android", shownDigest[:40]} {
		if !strings.Contains(certificate, want) && !strings.Contains(text, want) {
			t.Errorf("the signed PDF does not say %q:\n%s", want, certificate)
		}
	}
	if strings.Contains(text, "BORRADOR") {
		t.Error("the signed PDF says it is a draft")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
