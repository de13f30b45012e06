package upload_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/thumbnail"
	"github.com/propertyrecords/inventory/internal/thumbnail/thumbtest"
	"github.com/propertyrecords/inventory/internal/upload"
)

func folder(tb testing.TB) *files.Store {
	tb.Helper()
	fs, err := files.Open(context.Background(), files.Options{URL: "file://" + tb.TempDir(), SigningKey: []byte("upload test: 32 bytes of key....")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { fs.Close() })
	return fs
}

// noisy is an image that compresses badly: a phone photo's size at its pixels.
func noisy(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	return img
}

func encodeJPEG(tb testing.TB, img image.Image) []byte {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(tb testing.TB, img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// A 1×1 lossless WebP: the standard library has no WebP encoder.
var tinyWebP, _ = base64.StdEncoding.DecodeString("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")

func TestPhotosAreStoredByWhatTheyHold(t *testing.T) {
	ctx := context.Background()
	fs := folder(t)
	small := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for i := range small.Pix {
		small.Pix[i] = 200
	}
	for _, tc := range []struct {
		name, ext string
		data      []byte
	}{
		{"jpeg", "jpg", encodeJPEG(t, small)},
		{"png", "png", encodePNG(t, small)},
		{"webp", "webp", tinyWebP},
	} {
		id := uuid.New()
		got, err := upload.Store(ctx, fs, id, bytes.NewReader(tc.data), int64(len(tc.data)), upload.DefaultMaxPhotoBytes)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sum := sha256.Sum256(tc.data)
		if got.Reference != id.String()+"."+tc.ext || got.SHA256 != hex.EncodeToString(sum[:]) || got.Bytes != int64(len(tc.data)) {
			t.Errorf("%s: got %+v", tc.name, got)
		}
		key, _ := files.PhotoKey(got.Reference)
		if stored, err := fs.Get(ctx, key); err != nil || !bytes.Equal(stored, tc.data) {
			t.Errorf("%s: stored %d bytes (%v), want the upload's %d", tc.name, len(stored), err, len(tc.data))
		}
		thumbKey, _ := files.ThumbnailKey(got.SHA256)
		if thumb, err := fs.Get(ctx, thumbKey); err != nil || !thumbnail.Valid(thumb) {
			t.Errorf("%s: no valid thumbnail kept (%v)", tc.name, err)
		}
	}
}

func TestWhatIsNoPhotoIsRefusedAndLeavesNothing(t *testing.T) {
	ctx := context.Background()
	photo := encodeJPEG(t, noisy(64, 48))
	// A JPEG's start and then noise: right by its first bytes, no image.
	fake := append(bytes.Clone(photo[:200]), bytes.Repeat([]byte{0x42}, 4000)...)
	// A header that claims 65535×65535 pixels, gigabytes once decoded.
	scanBomb := thumbtest.ProgressiveJPEG(6400, 6400, 3000)
	pixelBomb := thumbtest.PNG(7000, 7000, thumbtest.RGBA, 8, true, 4)
	bomb := bytes.Clone(encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1))))
	copy(bomb[16:24], []byte{0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff})
	for _, tc := range []struct {
		name string
		data []byte
		size int64 // as the transport says; -1: unknown
		max  int64
		says string
	}{
		{"text named as a photo", []byte("not a photo at all, whatever its name says"), -1, upload.DefaultMaxPhotoBytes, "text/plain"},
		{"a PDF", []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj"), -1, upload.DefaultMaxPhotoBytes, "application/pdf"},
		{"a fake JPEG", fake, int64(len(fake)), upload.DefaultMaxPhotoBytes, "not a readable jpg image"},
		{"a decompression bomb", bomb, int64(len(bomb)), upload.DefaultMaxPhotoBytes, "not a readable png image"},
		{"over the bound, its size told", photo, int64(len(photo)), int64(len(photo) - 1), "over the"},
		{"over the bound, its size untold", photo, -1, int64(len(photo) - 1), "over the"},
		{"empty", nil, 0, upload.DefaultMaxPhotoBytes, "text/plain"},
		// Issue 34: bounded by their decode's work, not their bytes.
		{"a scan bomb (6400×6400, 3,000 scans)", scanBomb, int64(len(scanBomb)), upload.DefaultMaxPhotoBytes, "the photo is refused: decoding it would take about 3279 million sample visits, over the 1200 million"},
		{"a JPEG of 101 scans", thumbtest.ProgressiveJPEG(64, 48, 101), -1, upload.DefaultMaxPhotoBytes, "the photo is refused: its JPEG has 101 scans, over the 100"},
		{"a pixel bomb (an interlaced RGBA PNG of 7000×7000)", pixelBomb, -1, upload.DefaultMaxPhotoBytes, "over the 1200 million a photo may take"},
	} {
		fs := folder(t)
		_, err := upload.Store(ctx, fs, uuid.New(), bytes.NewReader(tc.data), tc.size, tc.max)
		e, _ := apperr.Public(err)
		if e == nil || e.Code != apperr.Invalid || e.Field != upload.Field || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: got %v, want INVALID_ARGUMENT on %q saying %q", tc.name, err, upload.Field, tc.says)
		}
		var left []string
		_ = fs.List(ctx, "", func(key string) error { left = append(left, key); return nil })
		if len(left) > 0 {
			t.Errorf("%s: left %v stored", tc.name, left)
		}
	}
}

// A 3 MB phone photo streams to the store: what the upload path allocates
// (B/op, 7.8 MB for 2.8 MB) is its one decode, for the thumbnail (4.7 MB
// of YCbCr at 3.1 megapixels, and the decoder's buffers), and no copy of the
// photo's bytes: storing alone (BenchmarkPutFromA3MBPhoto) takes 34 KB. Each photo differs by
// a JPEG comment, so that none finds its thumbnail already kept.
func BenchmarkStoreA3MBPhoto(b *testing.B) {
	photo := encodeJPEG(b, noisy(2048, 1536))
	fs := folder(b)
	b.SetBytes(int64(len(photo)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		comment := fmt.Sprintf("photo %08d", n)
		distinct := append([]byte{0xFF, 0xD8, 0xFF, 0xFE, 0, byte(len(comment) + 2)}, comment...)
		distinct = append(distinct, photo[2:]...)
		if _, err := upload.Store(context.Background(), fs, uuid.New(), bytes.NewReader(distinct), int64(len(distinct)), upload.DefaultMaxPhotoBytes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(photo)), "photo-bytes")
}

// Storing alone, the part that handles the upload's bytes: its allocations
// do not grow with the photo.
func BenchmarkPutFromA3MBPhoto(b *testing.B) {
	photo := encodeJPEG(b, noisy(2048, 1536))
	fs := folder(b)
	b.SetBytes(int64(len(photo)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fs.PutFrom(context.Background(), "photos/bench.jpg", io.NopCloser(bytes.NewReader(photo)), int64(len(photo))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(photo)), "photo-bytes")
}
