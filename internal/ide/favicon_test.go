package ide_test

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// /favicon.ico is the IDE's icon, which the page links to: an ICO file
// holding one 32-pixel PNG, served to anyone (a browser asks for it with
// no header), here by a server that takes API keys.
func TestTheIDEHasAnIcon(t *testing.T) {
	st := testdb.Open(t)
	srv := apitest.NewServerWith(t, st, server.Options{Auth: auth.APIKey, Verifier: auth.NewKeys(st.Client)})
	res, icon := srv.Get(t, "/favicon.ico", nil)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/") {
		t.Fatalf("GET /favicon.ico: got %d %q, want 200 and an image", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var dir struct {
		Reserved, Type, Count            uint16
		Width, Height, Colors, Reserved2 uint8
		Planes, BitCount                 uint16
		Bytes, Offset                    uint32
	}
	if err := binary.Read(bytes.NewReader(icon), binary.LittleEndian, &dir); err != nil || dir.Type != 1 || dir.Count != 1 ||
		int(dir.Offset)+int(dir.Bytes) != len(icon) {
		t.Fatalf("not an ICO file of one image: %+v (%v), %d bytes", dir, err, len(icon))
	}
	img, err := png.Decode(bytes.NewReader(icon[dir.Offset:]))
	if err != nil || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 32 || dir.Width != 32 {
		t.Fatalf("the icon's image: %v (%v); want a 32x32 PNG", img.Bounds(), err)
	}
	if res, page := srv.Get(t, "/", nil); res.StatusCode != http.StatusOK || !bytes.Contains(page, []byte(`<link rel="icon" href="/favicon.ico">`)) {
		t.Errorf("the IDE page (HTTP %d) does not link to its icon", res.StatusCode)
	}
}
