package datagen

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/jpeg"

	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// storePDF renders and stores a signed inventory's report and returns its
// SHA-256, or "" after remembering the first failure in g.err.
func (g *generator) storePDF(doc report.Inventory) string {
	if g.err != nil {
		return ""
	}
	doc.Zone = g.zone
	data, err := report.Render(g.ctx, doc)
	if err != nil {
		g.err = err
		return ""
	}
	sum, err := g.files.Put(g.ctx, files.PDFKey(doc.ID), data)
	if err != nil {
		g.err = err
	}
	return sum
}

// storePhoto stores a small photo drawn from its reference (not from the
// seeded generator, so ids do not depend on whether files are written), and
// its thumbnail, and returns its SHA-256 and thumbnail (for the report to
// embed).
func (g *generator) storePhoto(ref string) (string, []byte) {
	if g.files == nil || g.err != nil {
		return "", nil
	}
	key, err := files.PhotoKey(ref)
	if err != nil {
		g.err = err
		return "", nil
	}
	data := photo(ref)
	sum, err := g.files.Put(g.ctx, key, data)
	if err != nil {
		g.err = err
		return "", nil
	}
	thumb, err := thumbnail.Keep(g.ctx, g.files, sum, data)
	if err != nil {
		g.err = err // the generator's own photos always decode
	}
	return sum, thumb
}

// photo is a JPEG of a thumbnail's size, a gradient in colours drawn from
// the reference: thumbnail.Keep keeps it as its own thumbnail, where one of
// any other size is decoded and redrawn, which made loading the demo data
// take 80 s under the race detector.
func photo(ref string) []byte {
	seed := sha256.Sum256([]byte(ref))
	img := image.NewRGBA(image.Rect(0, 0, thumbnail.Width, thumbnail.Height))
	// Straight into Pix rather than through img.Set and its color.Model
	// conversion: the demo load makes thousands of these at every start.
	for y := 0; y < thumbnail.Height; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*thumbnail.Width]
		for x := 0; x < thumbnail.Width; x++ {
			px := row[4*x : 4*x+4 : 4*x+4]
			px[0], px[1], px[2], px[3] = seed[0]+uint8(x*2), seed[1]+uint8(y*3), seed[2]+uint8(x+y), 255
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		panic(err) // encoding an in-memory RGBA image cannot fail
	}
	return buf.Bytes()
}
