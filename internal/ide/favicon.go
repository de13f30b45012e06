package ide

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"net/http"
)

// favicon is the IDE's icon, /favicon.ico: a white house on a blue tile, 32
// pixels square, drawn here rather than kept as a binary file. An ICO file
// holding one PNG image, which every browser reads; the same bytes at every
// start (png.Encode is deterministic).
var favicon = iconFile(houseTile(32))

// houseTile draws the icon at size pixels: a rounded blue tile, and on it a
// house (a roof and a body with a door), in white.
func houseTile(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	blue := color.NRGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}
	white := color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	s := float64(size)
	for y := range size {
		for x := range size {
			fx, fy := (float64(x)+0.5)/s, (float64(y)+0.5)/s
			if !inRoundedSquare(fx, fy, 0.18) {
				continue
			}
			img.SetNRGBA(x, y, blue)
			// The roof: a triangle from the ridge (0.5, 0.16) to the eaves at
			// 0.48, 0.12 to 0.88 wide.
			roof := fy >= 0.16 && fy <= 0.48 && abs(fx-0.5) <= (fy-0.16)/0.32*0.38
			body := fx >= 0.22 && fx <= 0.78 && fy > 0.48 && fy <= 0.84
			door := fx >= 0.43 && fx <= 0.57 && fy >= 0.62 && fy <= 0.84
			if (roof || body) && !door {
				img.SetNRGBA(x, y, white)
			}
		}
	}
	return img
}

// inRoundedSquare reports whether (x, y), in the unit square, is inside it
// with its corners rounded by radius r.
func inRoundedSquare(x, y, r float64) bool {
	cx, cy := min(max(x, r), 1-r), min(max(y, r), 1-r)
	return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// iconFile is an ICO file of one image, stored as PNG: the ICONDIR header,
// one ICONDIRENTRY, then the PNG.
func iconFile(img *image.NRGBA) []byte {
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		panic(err) // encoding an in-memory image does not fail
	}
	size := img.Bounds().Dx()
	var out bytes.Buffer
	header := struct {
		Reserved, Type, Count uint16
	}{0, 1, 1}
	entry := struct {
		Width, Height, Colors, Reserved uint8
		Planes, BitCount                uint16
		Bytes, Offset                   uint32
	}{uint8(size % 256), uint8(size % 256), 0, 0, 1, 32, uint32(pngData.Len()), 6 + 16}
	_ = binary.Write(&out, binary.LittleEndian, header)
	_ = binary.Write(&out, binary.LittleEndian, entry)
	out.Write(pngData.Bytes())
	return out.Bytes()
}

// Favicon serves the IDE's icon. The same public bytes for everyone, so any
// cache may keep it for a day.
func Favicon() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(favicon)
	})
}
