package thumbnail_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/thumbnail"
	"github.com/propertyrecords/inventory/internal/thumbnail/thumbtest"
)

// streamed hides a reader's Seek: Make cannot weigh it first, and weighs it
// as it decodes.
type streamed struct{ r io.Reader }

func (s streamed) Read(p []byte) (int, error) { return s.r.Read(p) }

// Issue 34's bombs and their neighbours just within the bounds: each is
// weighed from its markers and refused or taken before anything is decoded,
// the refusal saying which bound; read as a stream (no second read), the
// decode stops at the bound all the same.
func TestDecodesAreBoundedByTheirWork(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		data   []byte
		over   string // "" when taken
		reason string
	}{
		{"issue 34's scan bomb: 6400×6400, 3,000 scans", thumbtest.ProgressiveJPEG(6400, 6400, 3000), "sample visits, over the 1200 million", "más de los 1200 millones"},
		{"101 scans of 500×500", thumbtest.ProgressiveJPEG(500, 500, thumbnail.MaxScans+1), "101 scans, over the 100", "JPEG de 101 barridos"},
		{"100 scans of 500×500", thumbtest.ProgressiveJPEG(500, 500, thumbnail.MaxScans), "", ""},
		{"6400×6400 in 26 scans", thumbtest.ProgressiveJPEG(6400, 6400, 26), "over the 1200 million", "muestras visitadas"},
		{"6400×6400 in 25 scans", thumbtest.ProgressiveJPEG(6400, 6400, 25), "", ""},
		{"a phone's progressive 12 MP grey, 6 scans", thumbtest.ProgressiveJPEG(4000, 3000, 6), "", ""},
		{"issue 34's pixel bomb: a grey PNG of 7000×7000", thumbtest.PNG(7000, 7000, thumbtest.Gray, 8, false, 0), "", ""},
		{"an RGBA PNG of 7000×7000, interlaced", thumbtest.PNG(7000, 7000, thumbtest.RGBA, 8, true, 4), "over the 1200 million", "muestras visitadas"},
		{"an RGBA PNG of 7000×7000", thumbtest.PNG(7000, 7000, thumbtest.RGBA, 8, false, 4), "", ""},
	} {
		start := time.Now()
		err := thumbnail.Weigh(ctx, bytes.NewReader(tc.data))
		took := time.Since(start)
		ns, _ := errors.AsType[*thumbnail.NotShown](err)
		switch {
		case tc.over == "" && err != nil:
			t.Errorf("%s: weighed %v, want it taken", tc.name, err)
			continue
		case tc.over != "" && (ns == nil || ns.Over == nil || !strings.Contains(ns.Over.Error(), tc.over) || !strings.Contains(ns.Reason, tc.reason)):
			t.Errorf("%s: weighed %v, want it over: %q (%q)", tc.name, err, tc.over, tc.reason)
			continue
		case took > time.Second:
			t.Errorf("%s: weighed in %s: reading markers is no decode", tc.name, took)
		}
		if tc.over == "" {
			continue
		}
		// Weighed first, refused without a decode; streamed, refused at the
		// bound (the decode is bounded, not avoided).
		before := thumbnail.OriginalsDecoded()
		if _, err := thumbnail.Make(ctx, bytes.NewReader(tc.data)); !sameOver(err, ns) || thumbnail.OriginalsDecoded() != before {
			t.Errorf("%s: Make got %v after %d decodes, want it refused before any", tc.name, err, thumbnail.OriginalsDecoded()-before)
		}
		if strings.Contains(tc.name, "26 scans") {
			continue // streamed, as the bomb: a decode to the bound is enough under -race
		}
		if _, err := thumbnail.Make(ctx, streamed{bytes.NewReader(tc.data)}); !sameOver(err, ns) {
			t.Errorf("%s: Make of a stream got %v, want it refused as it decodes", tc.name, err)
		}
	}
}

func sameOver(err error, want *thumbnail.NotShown) bool {
	got, ok := errors.AsType[*thumbnail.NotShown](err)
	return ok && got.Over != nil && got.Reason == want.Reason
}

// cpuTime is the CPU the process has used, its own and the kernel's for it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// noise is a w×h picture of grey 128 ± amp: sensor noise, which compresses
// worst.
func noise(w, h, amp int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range img.Pix {
		img.Pix[i] = uint8(128 + rng.IntN(2*amp+1) - amp)
	}
	return img
}

// BenchmarkWorstAcceptedPhotos decodes the dearest photo of each kind that
// the bounds take, and reports the CPU each costs (cpu-ms/op, the
// process's, garbage collection included): each must stay under 1,000 on
// the 2-core machine the bounds were set on. The bombs' refusal is
// BenchmarkWeighingTheBombs. WebP needs cwebp (Debian's webp), which is not
// there in CI: without it, that one is skipped.
func BenchmarkWorstAcceptedPhotos(b *testing.B) {
	for _, bc := range []struct {
		name string
		make func(b *testing.B) []byte
	}{
		// 8000×6250 4:2:0 at 25 MB, the byte bound: 1,150 million.
		{"jpeg-50MP-25MB", func(b *testing.B) []byte { return encodeJPEG(b, noise(8000, 6250, 28), 92) }},
		// 6400×6400 grey in 25 scans: 1,188 million.
		{"jpeg-41MP-25-scans", func(*testing.B) []byte { return thumbtest.ProgressiveJPEG(6400, 6400, 25) }},
		// 50 MP RGBA, every row Paeth: 800 million.
		{"png-50MP-rgba", func(*testing.B) []byte { return thumbtest.PNG(7071, 7071, thumbtest.RGBA, 8, false, 4) }},
		// 34 MP RGBA interlaced: 1,100 million.
		{"png-34MP-rgba-interlaced", func(*testing.B) []byte { return thumbtest.PNG(5860, 5860, thumbtest.RGBA, 8, true, 4) }},
		// 50 MP lossy and 25 MB lossless (the byte bound).
		{"webp-50MP-lossy", func(b *testing.B) []byte {
			return cwebp(b, noise(8000, 6250, 0), "-q", "100", "-m", "0", "-segments", "1", "-partition_limit", "100")
		}},
		{"webp-25MB-lossless", func(b *testing.B) []byte { return cwebp(b, noise(4000, 2500, 40), "-lossless", "-z", "0") }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := bc.make(b)
			if err := thumbnail.Weigh(context.Background(), bytes.NewReader(data)); err != nil {
				b.Fatalf("%d bytes: %v", len(data), err)
			}
			b.ReportMetric(float64(len(data))/1e6, "photo-MB")
			cpu := cpuTime()
			for b.Loop() {
				if _, err := thumbnail.Make(context.Background(), streamed{bytes.NewReader(data)}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkWeighingTheBombs: what refusing issue 34's photos costs.
func BenchmarkWeighingTheBombs(b *testing.B) {
	for name, data := range map[string][]byte{
		"jpeg-6400x6400-3000-scans":     thumbtest.ProgressiveJPEG(6400, 6400, 3000),
		"png-7000x7000-rgba-interlaced": thumbtest.PNG(7000, 7000, thumbtest.RGBA, 8, true, 4),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := thumbnail.Make(context.Background(), bytes.NewReader(data)); err == nil {
					b.Fatal("taken")
				}
			}
		})
	}
}

func encodeJPEG(b *testing.B, img image.Image, quality int) []byte {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func cwebp(b *testing.B, img image.Image, args ...string) []byte {
	if _, err := exec.LookPath("cwebp"); err != nil {
		b.Skip("cwebp (Debian's webp) is not installed")
	}
	dir := b.TempDir()
	var in bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&in, img); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.png"), in.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out.webp")
	if msg, err := exec.Command("cwebp", append(args, "-quiet", filepath.Join(dir, "in.png"), "-o", out)...).CombinedOutput(); err != nil {
		b.Fatalf("cwebp: %v %s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
