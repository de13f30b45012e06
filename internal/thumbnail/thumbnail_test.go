package thumbnail_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// photo is a w×h JPEG, in colour c, with a darker band across its top.
func photo(tb testing.TB, w, h int, c color.RGBA) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			px := c
			if y < h/10 {
				px = color.RGBA{c.R / 2, c.G / 2, c.B / 2, 255}
			}
			img.SetRGBA(x, y, px)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// claiming is data, a baseline JPEG, with the size its header states
// changed to w×h: what a decompression bomb looks like from outside.
func claiming(tb testing.TB, data []byte, w, h int) []byte {
	tb.Helper()
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	if i < 0 {
		tb.Fatal("no SOF0 marker")
	}
	out := bytes.Clone(data)
	out[i+5], out[i+6], out[i+7], out[i+8] = byte(h>>8), byte(h), byte(w>>8), byte(w)
	return out
}

// progressive is data, a baseline JPEG, marked progressive (SOF2).
func progressive(tb testing.TB, data []byte) []byte {
	tb.Helper()
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	if i < 0 {
		tb.Fatal("no SOF0 marker")
	}
	out := bytes.Clone(data)
	out[i+1] = 0xC2
	return out
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func store(tb testing.TB) *files.Store {
	tb.Helper()
	fs, err := files.Open(context.Background(), files.Options{URL: "mem://", SigningKey: []byte("a test signing key of 32 bytes!!")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { fs.Close() })
	return fs
}

// A thumbnail is the photo fitted into Width×Height with its proportions
// kept (a portrait photo between two grey bands), and the same photo makes
// the same bytes every time: reports that draw them stay byte-stable.
func TestThumbnailsFitThePhotoAndAreTheSameBytesEveryTime(t *testing.T) {
	ctx := context.Background()
	portrait := photo(t, 300, 400, color.RGBA{200, 40, 40, 255})
	first, err := thumbnail.Make(ctx, bytes.NewReader(portrait))
	if err != nil {
		t.Fatal(err)
	}
	again, err := thumbnail.Make(ctx, bytes.NewReader(portrait))
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("the same photo made different thumbnails (%v)", err)
	}
	if !thumbnail.Valid(first) {
		t.Fatalf("%d bytes: not a valid thumbnail", len(first))
	}
	img, err := jpeg.Decode(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got != image.Pt(thumbnail.Width, thumbnail.Height) {
		t.Fatalf("got %v, want %dx%d", got, thumbnail.Width, thumbnail.Height)
	}
	// 300×400 in 96×72 is 54×72, centred: 21 columns of ground each side.
	for _, at := range []struct {
		x, y int
		red  bool
	}{{2, 36, false}, {93, 36, false}, {48, 40, true}} {
		r, g, _, _ := img.At(at.x, at.y).RGBA()
		if red := r>>8 > 150 && g>>8 < 100; red != at.red {
			t.Errorf("pixel %d,%d: red %v, want %v", at.x, at.y, red, at.red)
		}
	}
}

// A JPEG of a thumbnail's size is its own thumbnail: kept byte for byte,
// without a decode (the generator's photos are such, and redrawing each cost
// most of loading the demo data).
func TestAJPEGOfAThumbnailsSizeIsItsOwnThumbnail(t *testing.T) {
	small := photo(t, thumbnail.Width, thumbnail.Height, color.RGBA{20, 200, 40, 255})
	before := thumbnail.OriginalsDecoded()
	got, err := thumbnail.Make(context.Background(), bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, small) {
		t.Errorf("got %d bytes, want the photo's own %d", len(got), len(small))
	}
	if n := thumbnail.OriginalsDecoded() - before; n != 0 {
		t.Errorf("decoded %d originals, want 0", n)
	}
	// One pixel wider is redrawn, as any other photo.
	wider := photo(t, thumbnail.Width+1, thumbnail.Height, color.RGBA{20, 200, 40, 255})
	if got, err := thumbnail.Make(context.Background(), bytes.NewReader(wider)); err != nil || bytes.Equal(got, wider) || !thumbnail.Valid(got) {
		t.Errorf("a %d×%d photo: got %d bytes (%v), want a thumbnail made of it", thumbnail.Width+1, thumbnail.Height, len(got), err)
	}
}

// A header claiming more than MaxPixels is refused before any decoding,
// and so is a file that is no image; neither is an error of the caller's.
func TestPhotosOverTheLimitOrUnreadableAreNotShownAndNotDecoded(t *testing.T) {
	ctx := context.Background()
	small := photo(t, 64, 48, color.RGBA{10, 120, 200, 255})
	larger := photo(t, 640, 480, color.RGBA{10, 120, 200, 255})
	for name, tc := range map[string]struct {
		data    []byte
		reason  string
		decoded int64
	}{
		"a 65000×65000 bomb":           {claiming(t, small, 65000, 65000), "65000×65000 píxeles, más de los 50 megapíxeles", 0},
		"just over the limit":          {claiming(t, small, 10000, 5001), "más de los 50 megapíxeles", 0},
		"not an image":                 {[]byte("%PDF-1.4 not a photo"), "no es una imagen legible", 0},
		"a progressive 48 MP header":   {progressive(t, claiming(t, small, 8000, 6000)), "8000×6000 píxeles necesitarían 343 MB para procesarse, más de 200 MB", 0},
		"a JPEG cut short":             {larger[:len(larger)*2/3], "la imagen JPEG está dañada o incompleta", 1},
		"a HEIC photo, which Go lacks": {append([]byte("\x00\x00\x00\x18ftypheic"), make([]byte, 64)...), "no es una imagen legible", 0},
	} {
		before := thumbnail.OriginalsDecoded()
		_, err := thumbnail.Make(ctx, bytes.NewReader(tc.data))
		reason, ok := thumbnail.IsNotShown(err)
		if !ok || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: got %v, want not shown: %q", name, err, tc.reason)
		}
		if got := thumbnail.OriginalsDecoded() - before; got != tc.decoded {
			t.Errorf("%s: %d decoded, want %d", name, got, tc.decoded)
		}
	}
}

// cancelling is a reader that cancels its context once n bytes were read.
type cancelling struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelling) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= n; c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// A decode stops when its context ends, midway through the photo, with the
// context's error (the request's, not the photo's fault).
func TestMakeStopsMidPhotoWhenItsContextEnds(t *testing.T) {
	big := photo(t, 1600, 1200, color.RGBA{90, 90, 90, 255})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := thumbnail.Make(ctx, &cancelling{r: bytes.NewReader(big), n: len(big) / 3, cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if _, notShown := thumbnail.IsNotShown(err); notShown {
		t.Fatal("a cut decode was taken for the photo's fault")
	}
}

// For makes a photo's thumbnail once and keeps it: asked again, it decodes
// nothing and does not even read the original (here replaced by junk).
// A thumbnail is only ever made from an original that matches its recorded
// SHA-256, and one missing is not shown.
func TestForMakesEachThumbnailOnceFromTheOriginalItsDigestNames(t *testing.T) {
	ctx := context.Background()
	fs := store(t)
	original := photo(t, 640, 480, color.RGBA{30, 160, 60, 255})
	sum, err := fs.Put(ctx, "photos/a.jpg", original)
	if err != nil {
		t.Fatal(err)
	}
	before := thumbnail.OriginalsDecoded()
	first, err := thumbnail.For(ctx, fs, "a.jpg", sum)
	if err != nil || !thumbnail.Valid(first) {
		t.Fatalf("first: %v", err)
	}
	if _, err := fs.Put(ctx, "photos/a.jpg", []byte("junk")); err != nil {
		t.Fatal(err)
	}
	again, err := thumbnail.For(ctx, fs, "a.jpg", sum)
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("again: %v, same bytes %v", err, bytes.Equal(first, again))
	}
	if got := thumbnail.OriginalsDecoded() - before; got != 1 {
		t.Errorf("%d originals decoded, want 1", got)
	}
	key, _ := files.ThumbnailKey(sum)
	if kept, err := fs.Get(ctx, key); err != nil || !bytes.Equal(kept, first) {
		t.Errorf("kept at %s: %v", key, err)
	}

	// Changed since its digest was recorded: refused, and nothing kept.
	other := photo(t, 640, 480, color.RGBA{160, 30, 60, 255})
	if _, err := fs.Put(ctx, "photos/b.jpg", other); err != nil {
		t.Fatal(err)
	}
	recorded := digest(photo(t, 640, 480, color.RGBA{0, 0, 0, 255}))
	_, err = thumbnail.For(ctx, fs, "b.jpg", recorded)
	if reason, _ := thumbnail.IsNotShown(err); !strings.Contains(reason, "no coincide con su SHA-256") {
		t.Errorf("a changed original: got %v, want not shown as changed", err)
	}
	key, _ = files.ThumbnailKey(recorded)
	if _, err := fs.Get(ctx, key); err == nil {
		t.Error("a thumbnail was kept under the digest of a photo it does not show")
	}

	// No digest recorded: the stored file's names its thumbnail.
	if got, err := thumbnail.For(ctx, fs, "b.jpg", ""); err != nil || !thumbnail.Valid(got) {
		t.Errorf("no recorded digest: %v", err)
	}
	if _, err := thumbnail.For(ctx, fs, "missing.jpg", ""); err == nil || !strings.Contains(err.Error(), "archivo no encontrado") {
		t.Errorf("missing: got %v, want not shown: archivo no encontrado", err)
	}
}

// Requests at once for the same photo without a thumbnail decode it once;
// one whose context ends while another makes it returns at once, and the
// thumbnail is made all the same.
func TestRequestsAtOnceDecodeAPhotoOnce(t *testing.T) {
	ctx := context.Background()
	fs := store(t)
	original := photo(t, 2400, 1800, color.RGBA{60, 60, 160, 255})
	sum, err := fs.Put(ctx, "photos/c.jpg", original)
	if err != nil {
		t.Fatal(err)
	}
	before := thumbnail.OriginalsDecoded()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := thumbnail.For(gone, fs, "c.jpg", sum); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended request: got %v, want context.Canceled", err)
	}
	results := make(chan error, 4)
	for range 4 {
		go func() {
			thumb, err := thumbnail.For(ctx, fs, "c.jpg", sum)
			if err == nil && !thumbnail.Valid(thumb) {
				err = errors.New("not a valid thumbnail")
			}
			results <- err
		}()
	}
	for range 4 {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	if got := thumbnail.OriginalsDecoded() - before; got != 1 {
		t.Errorf("%d decodes for 4 requests at once, want 1", got)
	}
}
