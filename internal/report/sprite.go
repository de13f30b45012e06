package report

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"

	"github.com/go-pdf/fpdf"
)

// A report's photos are embedded as one image, a sprite of thumbnails, each
// drawn through a clip of its cell. fpdf writes several images in the order
// of a Go map (its catalog sort only orders them by width, and thumbnails
// share one), which would make the same inventory render to different
// bytes; one image keeps a report's SHA-256 stable, and keeps a report of
// thousands of phone photos small.
const (
	cellWidth, cellHeight = 96, 72 // pixels of a thumbnail
	spriteName            = "thumbnails"
)

// sprite is the thumbnails of a report, by photo reference, in one image.
type sprite struct {
	cells   map[string]int // reference → cell
	columns int
	rows    int
}

// newSprite decodes and shrinks each photo into a cell of one JPEG and
// registers it with pdf; a photo without bytes, or that does not decode,
// gets a grey cell.
func newSprite(pdf *fpdf.Fpdf, photos []Photo) *sprite {
	s := &sprite{cells: map[string]int{}}
	var unique []Photo
	for _, p := range photos {
		if _, seen := s.cells[p.Reference]; !seen {
			s.cells[p.Reference] = len(unique)
			unique = append(unique, p)
		}
	}
	if len(unique) == 0 {
		return s
	}
	s.columns = min(len(unique), 32)
	s.rows = (len(unique) + s.columns - 1) / s.columns
	canvas := image.NewRGBA(image.Rect(0, 0, s.columns*cellWidth, s.rows*cellHeight))
	grey := color.RGBA{200, 200, 200, 255}
	for i, p := range unique {
		x0, y0 := (i%s.columns)*cellWidth, (i/s.columns)*cellHeight
		img, err := jpeg.Decode(bytes.NewReader(p.JPEG))
		for y := 0; y < cellHeight; y++ {
			for x := 0; x < cellWidth; x++ {
				c := color.Color(grey)
				if err == nil { // nearest neighbour: thumbnails, not prints
					b := img.Bounds()
					c = img.At(b.Min.X+x*b.Dx()/cellWidth, b.Min.Y+y*b.Dy()/cellHeight)
				}
				canvas.Set(x0+x, y0+y, c)
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, canvas, &jpeg.Options{Quality: 85}); err == nil {
		pdf.RegisterImageOptionsReader(spriteName, fpdf.ImageOptions{ImageType: "JPG"}, &buf)
	}
	return s
}

// draw puts the thumbnail of reference at x, y in w×h millimetres; a frame
// where it has none.
func (s *sprite) draw(pdf *fpdf.Fpdf, reference string, x, y, w, h float64) {
	cell, ok := s.cells[reference]
	if !ok || !pdf.Ok() {
		pdf.Rect(x, y, w, h, "D")
		return
	}
	col, row := cell%s.columns, cell/s.columns
	pdf.ClipRect(x, y, w, h, false)
	pdf.ImageOptions(spriteName, x-float64(col)*w, y-float64(row)*h, float64(s.columns)*w, float64(s.rows)*h,
		false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
	pdf.ClipEnd()
}
