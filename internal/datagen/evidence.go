package datagen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/jpeg"

	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// storePDF renders a signed inventory's report, has it stored (put), and
// returns its SHA-256, or "" after remembering the first failure in g.err.
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
	g.put(files.PDFKey(doc.ID), data)
	return sha256Hex(data)
}

// storePhoto has a small photo drawn from its reference (not from the
// seeded generator, so ids do not depend on whether files are written), and
// its thumbnail, stored (put), and returns its SHA-256 and thumbnail (for
// the report to embed).
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
	sum := sha256Hex(data)
	thumbKey, thumb, err := thumbnail.Of(g.ctx, sum, data)
	if err != nil {
		g.err = err // the generator's own photos always decode
		return "", nil
	}
	g.put(key, data)
	g.put(thumbKey, thumb)
	return sum, thumb
}

// put stores data under key beside the generation (g.writes, a few at a
// time): creating thousands of files is most of a first start's wait on a
// slow disk, and the other core draws the next photos meanwhile. Load
// waits for every write before the records naming them commit.
func (g *generator) put(key string, data []byte) {
	g.writes.Go(func() error {
		_, err := g.files.Put(g.ctx, key, data)
		return err
	})
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
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
