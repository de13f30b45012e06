package rest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// The comparison PDF of two inventories with 150 photos of 12 megapixels
// each (4000×3000 with sensor noise, 3.6 MB apiece, in a folder store as
// in production): what used to run for a minute and 827 MB. Import makes
// each photo's thumbnail as it stores it; the first render reads those
// thumbnails, and later ones the same. Reported:
//
//   - ingest-ms/photo: making one thumbnail from a 12 MP original, as import
//     does once per photo;
//   - lazy-ms/photo and lazy-peak-heap-MB: the first render of a smaller
//     comparison (2 × 8 photos) stored with no thumbnails, which makes them;
//   - first-render-s and cached-render-s: the whole request over HTTP;
//   - peak-heap-MB: the most heap in use during those renders, sampled every
//     millisecond; peak-rss-MB: the process's, setup included.
func BenchmarkComparisonPDFOf12MPPhotos(b *testing.B) {
	ctx := context.Background()
	st := testdb.Open(b)
	fs, err := files.Open(ctx, files.Options{URL: "file://" + b.TempDir(), SigningKey: []byte(apitest.SigningKey)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fs.Close() })
	company := uuid.New()
	moveIn, moveOut := apitest.LargeComparisonFixture(b, st.Client, company, 10, 15)
	srv := apitest.NewServer(b, st, fs)
	photos := photosOf(b, st.Client, moveIn, moveOut)
	if len(photos) != 300 {
		b.Fatalf("%d photos, want 300", len(photos))
	}
	original := noisyJPEG(b, 4000, 3000)
	storePhotos(b, st.Client, fs, photos, func(i int) []byte { return variant(original, i) })

	// Every photo has the same pixels, so the same thumbnail: import's work
	// is timed on a few and its result kept for the others, rather than
	// spend a minute of CPU making 300 identical ones.
	const timed = 4
	var made []byte
	start := time.Now()
	for i := range timed {
		data := variant(original, i)
		sum := sha256.Sum256(data)
		if made, err = thumbnail.Keep(ctx, fs, hex.EncodeToString(sum[:]), data); err != nil {
			b.Fatal(err)
		}
	}
	ingest := time.Since(start) / timed
	for i := timed; i < len(photos); i++ {
		sum := sha256.Sum256(variant(original, i))
		key, _ := files.ThumbnailKey(hex.EncodeToString(sum[:]))
		if _, err := fs.Put(ctx, key, made); err != nil {
			b.Fatal(err)
		}
	}

	render := func(path string) {
		res, body := srv.Get(b, path, nil)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "%PDF-") {
			b.Fatalf("got %d %.200s, want 200 and a PDF", res.StatusCode, body)
		}
	}
	heap := sampleHeap(b)

	smallIn, smallOut := apitest.LargeComparisonFixture(b, st.Client, company, 1, 8)
	lazy := photosOf(b, st.Client, smallIn, smallOut)
	storePhotos(b, st.Client, fs, lazy, func(i int) []byte { return variant(original, len(photos)+i) })
	runtime.GC()
	heap.reset()
	decoded := thumbnail.OriginalsDecoded()
	start = time.Now()
	render(comparisonPDF(smallIn, smallOut, company))
	lazyPerPhoto := time.Since(start) / time.Duration(len(lazy))
	lazyHeap := heap.peak()
	if n := thumbnail.OriginalsDecoded() - decoded; n != int64(len(lazy)) {
		b.Errorf("%d originals decoded by the lazy render, want %d", n, len(lazy))
	}

	path := comparisonPDF(moveIn, moveOut, company)
	runtime.GC()
	heap.reset()
	decoded = thumbnail.OriginalsDecoded()
	start = time.Now()
	render(path)
	first := time.Since(start)
	for b.Loop() {
		render(path)
	}
	if n := thumbnail.OriginalsDecoded() - decoded; n != 0 {
		b.Errorf("%d originals decoded by the renders, want 0", n)
	}
	b.ReportMetric(ingest.Seconds()*1000, "ingest-ms/photo")
	b.ReportMetric(lazyPerPhoto.Seconds()*1000, "lazy-ms/photo")
	b.ReportMetric(float64(lazyHeap)/(1<<20), "lazy-peak-heap-MB")
	b.ReportMetric(first.Seconds(), "first-render-s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "cached-render-s")
	b.ReportMetric(float64(heap.peak())/(1<<20), "peak-heap-MB")
	if rss := peakRSS(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MB")
	}
}

// heapSampler keeps the most heap in use (live and unswept objects) seen
// since its last reset, sampled every millisecond until the benchmark ends.
type heapSampler struct{ most atomic.Uint64 }

func (h *heapSampler) reset()       { h.most.Store(0) }
func (h *heapSampler) peak() uint64 { return h.most.Load() }

func sampleHeap(b *testing.B) *heapSampler {
	h := &heapSampler{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > h.most.Load() {
				h.most.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	b.Cleanup(func() { close(done); <-stopped })
	return h
}

// peakRSS is the process's peak resident set (VmHWM), or 0 where /proc has
// none.
func peakRSS() uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
