package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"

	"github.com/go-pdf/fpdf"

	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// A report's photos are embedded as one image, a sprite of thumbnails, each
// drawn through a clip of its cell. fpdf writes several images in the order
// of a Go map (its catalog sort only orders them by width, and thumbnails
// share one), which would make the same inventory render to different
// bytes; one image keeps a report's SHA-256 stable, and keeps a report of
// thousands of phone photos small.
//
// A cell is a thumbnail as internal/thumbnail makes it, copied as it is: a
// report never decodes an original photo, only thumbnails of 96×72 pixels.
const (
	cellWidth, cellHeight = thumbnail.Width, thumbnail.Height
	spriteName            = "thumbnails"
)

// sprite is the thumbnails of a report, by photo reference, in one image.
type sprite struct {
	cells    map[string]int    // reference → cell
	notShown map[string]string // reference → why it has no cell
	columns  int
	rows     int
}

// newSprite puts each photo's thumbnail into a cell of one JPEG and
// registers it with pdf. A photo without a thumbnail gets no cell, and is
// drawn as a frame saying why. It stops, with ctx's error, once ctx ends.
func newSprite(ctx context.Context, pdf *fpdf.Fpdf, photos []Photo) (*sprite, error) {
	s := &sprite{cells: map[string]int{}, notShown: map[string]string{}}
	var thumbs []image.Image
	for _, p := range photos {
		if _, seen := s.cells[p.Reference]; seen {
			continue
		}
		if _, seen := s.notShown[p.Reference]; seen {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: drawing the photos: %w", err)
		}
		img, reason := decodeThumbnail(p)
		if img == nil {
			s.notShown[p.Reference] = reason
			continue
		}
		s.cells[p.Reference] = len(thumbs)
		thumbs = append(thumbs, img)
	}
	if len(thumbs) == 0 {
		return s, nil
	}
	s.columns = min(len(thumbs), 32)
	s.rows = (len(thumbs) + s.columns - 1) / s.columns
	canvas := image.NewRGBA(image.Rect(0, 0, s.columns*cellWidth, s.rows*cellHeight))
	draw.Draw(canvas, canvas.Bounds(), image.NewUniform(color.RGBA{200, 200, 200, 255}), image.Point{}, draw.Src)
	for i, img := range thumbs {
		at := image.Pt((i%s.columns)*cellWidth, (i/s.columns)*cellHeight)
		draw.Draw(canvas, image.Rectangle{Min: at, Max: at.Add(image.Pt(cellWidth, cellHeight))}, img, img.Bounds().Min, draw.Src)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, canvas, &jpeg.Options{Quality: 85}); err == nil {
		pdf.RegisterImageOptionsReader(spriteName, fpdf.ImageOptions{ImageType: "JPG"}, &buf)
	}
	return s, nil
}

// decodeThumbnail is p's thumbnail, or nil and why it has none.
func decodeThumbnail(p Photo) (image.Image, string) {
	switch {
	case p.NotShown != "":
		return nil, p.NotShown
	case p.Thumbnail == nil:
		return nil, "sin miniatura"
	case !thumbnail.Valid(p.Thumbnail): // checked from its header: never an original
		return nil, "miniatura no válida"
	}
	img, err := jpeg.Decode(bytes.NewReader(p.Thumbnail))
	if err != nil {
		return nil, "miniatura no válida"
	}
	return img, ""
}

// draw puts the thumbnail of reference at x, y in w×h millimetres; a frame
// saying why where it has none.
func (s *sprite) draw(pdf *fpdf.Fpdf, tr func(string) string, reference string, x, y, w, h float64) {
	cell, ok := s.cells[reference]
	if !ok || !pdf.Ok() {
		pdf.Rect(x, y, w, h, "D")
		if reason := s.notShown[reference]; reason != "" {
			pdf.SetFont("Helvetica", "", 6)
			pdf.SetXY(x+0.5, y+1)
			pdf.MultiCell(w-1, 2.6, tr("foto no mostrada: "+reason), "", "L", false)
		}
		return
	}
	col, row := cell%s.columns, cell/s.columns
	pdf.ClipRect(x, y, w, h, false)
	pdf.ImageOptions(spriteName, x-float64(col)*w, y-float64(row)*h, float64(s.columns)*w, float64(s.rows)*h,
		false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
	pdf.ClipEnd()
}
