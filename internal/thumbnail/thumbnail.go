// Package thumbnail makes and keeps the small pictures that reports draw of
// item photos. A phone photo of 12 megapixels takes about a third of a
// second of CPU and some 20 MB to decode; a report of hundreds of them,
// decoding each on every request, ran for a minute. So each photo is decoded
// once, when it is stored (import, generate) or on its first use, into a
// thumbnail kept beside it in the blob store (files.ThumbnailKey, named by the
// original's SHA-256), and reports only ever read thumbnails.
package thumbnail

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // formats a photo may be stored in (storageref.Pattern) that Go decodes
	"image/jpeg"
	_ "image/png"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	_ "golang.org/x/image/webp" // phones' uploads may be WebP
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/waitbudget"
)

const (
	// Width and Height are a thumbnail's pixels: the cell a report draws a
	// photo in (28×21 mm), at about 87 dpi.
	Width, Height = 96, 72

	// MaxPixels is the largest photo decoded. The largest phone cameras in
	// ordinary use take 48 to 50 megapixels, so no real photo is refused; a
	// decompression bomb (a few KB whose header claims 65535×65535, 4.3
	// gigapixels, gigabytes once decoded) is, from its header alone.
	MaxPixels = 50_000_000

	// maxThumbnailBytes bounds reading a stored thumbnail (ours are 3 to 5
	// KB): a larger file under a thumbnail's name is not one of ours, and is
	// made again.
	maxThumbnailBytes = 64 << 10

	quality = 85

	// decodeMaxWait bounds the wait for a decode's place of work that is no
	// request's (import, verify): a request's own patience is shorter.
	decodeMaxWait = time.Minute
)

var (
	// decodeShare shares the decodes between companies, a place a core:
	// one company's uploads (or bombs) take at most all but a quarter of
	// them (one of two), and each place that frees goes to the company with
	// the fewest decodes running. A company with 16 a place waiting is
	// refused (RATE_LIMITED), and a decode waits for a place no longer than
	// its request's patience (the acquire timeout) or decodeMaxWait.
	decodeShare = fairshare.NewQueue(fairshare.QueueOptions{
		Places: max(2, runtime.GOMAXPROCS(0)), MaxQueued: 16 * max(2, runtime.GOMAXPROCS(0)), MaxWait: decodeMaxWait})
	decoding = semaphore.NewWeighted(decodeBudget)
	making   singleflight.Group // by thumbnail and photo key
	decoded  atomic.Int64
)

// OriginalsDecoded is how many originals this process has decoded: each is
// a third of a second of CPU, so the count is what caching saves.
func OriginalsDecoded() int64 { return decoded.Load() }

// NotShown is why a report shows a placeholder instead of a photo. Its
// Reason is in the report's language. Over, when set, is the bound on
// decoding that the photo passes, for a client told why its upload is
// refused.
type NotShown struct {
	Reason string
	Over   *OverWork
}

func (e *NotShown) Error() string { return "photo not shown: " + e.Reason }

// overWork is err as a photo not shown, when it is a bound passed.
func overWork(err error) (*NotShown, bool) {
	over, ok := errors.AsType[*OverWork](err)
	if !ok {
		return nil, false
	}
	reason := fmt.Sprintf("decodificarla costaría unos %d millones de muestras visitadas, más de los %d millones que se procesan", over.Work/1_000_000, MaxDecodeWork/1_000_000)
	if over.Scans > MaxScans {
		reason = fmt.Sprintf("JPEG de %d barridos, más de los %d que se procesan", over.Scans, MaxScans)
	}
	return &NotShown{Reason: reason, Over: over}, true
}

func notShown(format string, args ...any) error {
	return &NotShown{Reason: fmt.Sprintf(format, args...)}
}

// For returns the thumbnail of the stored photo reference whose SHA-256 was
// recorded as recorded ("" when none was, and the stored file's is used):
// the kept one, or one made now from the original and kept. A photo that
// cannot be shown is a *NotShown; any other error (the store's, or ctx's)
// is the caller's to return.
func For(ctx context.Context, store *files.Store, reference, recorded string) ([]byte, error) {
	thumb, _, err := get(ctx, store, reference, recorded)
	return thumb, err
}

// Ensure makes and keeps the thumbnail of a stored photo unless a valid one
// is kept, and says whether it made one: for photos stored before
// thumbnails were kept, or by a path that keeps none.
func Ensure(ctx context.Context, store *files.Store, reference, recorded string) (made bool, err error) {
	_, made, err = get(ctx, store, reference, recorded)
	return made, err
}

func get(ctx context.Context, store *files.Store, reference, recorded string) (thumb []byte, made bool, err error) {
	key, err := files.PhotoKey(reference)
	if err != nil {
		return nil, false, notShown("nombre de archivo no válido")
	}
	sum := recorded
	if sum == "" {
		if sum, err = store.Digest(ctx, key); err != nil {
			return nil, false, missing(err)
		}
	}
	thumbKey, err := files.ThumbnailKey(sum)
	if err != nil {
		return nil, false, notShown("SHA-256 registrado no válido")
	}
	if thumb, err := kept(ctx, store, thumbKey); err != nil || thumb != nil {
		return thumb, false, err
	}
	// Two requests at once for a photo without a thumbnail (a manager
	// pressing twice, two parties opening one comparison) decode it once;
	// the one that waits returns as soon as its own request ends.
	for {
		flight := making.DoChan(thumbKey+" "+key, func() (any, error) { return makeAndKeep(ctx, store, key, sum, thumbKey) })
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case res := <-flight:
			if res.Err != nil && ctx.Err() == nil && (errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded)) {
				continue // the request that was making it ended, not this one
			}
			thumb, _ := res.Val.([]byte)
			return thumb, res.Err == nil, res.Err // made by this call, or by the one it waited for
		}
	}
}

// makeAndKeep makes the thumbnail of the photo at key, whose SHA-256 was
// recorded as sum, and keeps it at thumbKey.
func makeAndKeep(ctx context.Context, store *files.Store, key, sum, thumbKey string) ([]byte, error) {
	// A first read hashes the original and weighs its decode, so that a
	// photo over the bounds costs one read and no decode (a second read of
	// a photo that is decoded is cheap beside its decode).
	if err := check(ctx, store, key, sum); err != nil {
		return nil, err
	}
	original, err := store.Open(ctx, key)
	if err != nil {
		return nil, missing(err)
	}
	defer original.Close()
	// The original is hashed as it is decoded too: a file changed since its
	// digest was recorded must not be shown under that digest, nor kept as
	// its thumbnail.
	hash := sha256.New()
	thumb, err := Make(ctx, io.TeeReader(original, hash))
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(hash, reader{ctx, original}); err != nil {
		return nil, err
	}
	if hex.EncodeToString(hash.Sum(nil)) != sum {
		return nil, notShown("el archivo guardado no coincide con su SHA-256 registrado")
	}
	// A store that refuses writes (full, read-only) costs the next report
	// this decode again, not this one its photo: a thumbnail is derived.
	if _, err := store.Put(ctx, thumbKey, thumb); err != nil && apperr.CodeOf(err) != apperr.Unavailable {
		return nil, err
	}
	return thumb, nil
}

// check reads the original at key whole: one whose SHA-256 is not sum, or
// whose decode would pass the bounds (MaxScans, MaxDecodeWork), is a
// *NotShown.
func check(ctx context.Context, store *files.Store, key, sum string) error {
	original, err := store.Open(ctx, key)
	if err != nil {
		return missing(err)
	}
	defer original.Close()
	hash := sha256.New()
	if err := Weigh(ctx, io.TeeReader(original, hash)); err != nil {
		return err
	}
	if _, err := io.Copy(hash, reader{ctx, original}); err != nil {
		return err
	}
	if hex.EncodeToString(hash.Sum(nil)) != sum {
		return notShown("el archivo guardado no coincide con su SHA-256 registrado")
	}
	return nil
}

// Weigh reads the photo r holds to its end (or as far as it is over a
// bound) and says whether its decode stays within the bounds: nil, or a
// *NotShown (Over says which bound it passes; a file that is no image is
// one too). It decodes nothing: a JPEG's entropy-coded data is skipped, at
// tens of MB a second.
func Weigh(ctx context.Context, r io.Reader) error {
	in := bufio.NewReader(reader{ctx, r})
	var header bytes.Buffer
	cfg, format, err := image.DecodeConfig(io.TeeReader(in, &header))
	if err := ctx.Err(); err != nil {
		return err
	}
	if err != nil {
		return notShown("no es una imagen legible (JPEG, PNG o GIF)")
	}
	if err := checkPixels(cfg); err != nil {
		return err
	}
	weighing := newInspector(format, cfg, header.Bytes())
	_, err = io.Copy(weighing, io.MultiReader(&header, in))
	if err := ctx.Err(); err != nil {
		return err
	}
	if ns, over := overWork(err); over {
		return ns
	}
	return err
}

// checkPixels refuses a header of no pixels or over MaxPixels.
func checkPixels(cfg image.Config) error {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	switch {
	case pixels <= 0:
		return notShown("no es una imagen legible (JPEG, PNG o GIF)")
	case pixels > MaxPixels:
		return notShown("%d×%d píxeles, más de los %d megapíxeles que se procesan", cfg.Width, cfg.Height, MaxPixels/1_000_000)
	}
	return nil
}

// Keep makes and keeps the thumbnail of a photo being stored, whose bytes
// are original and SHA-256 sum: so that no report has to decode it. A photo
// that cannot be shown is a *NotShown, which is no reason to refuse storing
// it (the report says why it shows none).
func Keep(ctx context.Context, store *files.Store, sum string, original []byte) ([]byte, error) {
	thumbKey, thumb, err := Of(ctx, sum, original)
	if err != nil {
		return nil, err
	}
	if _, err := store.Put(ctx, thumbKey, thumb); err != nil {
		return nil, err
	}
	return thumb, nil
}

// Of is Keep without the keeping: the thumbnail of a photo whose bytes are
// original and SHA-256 sum, and the key it is kept under, for a writer
// that stores files in bulk (the demo load).
func Of(ctx context.Context, sum string, original []byte) (key string, thumb []byte, err error) {
	if key, err = files.ThumbnailKey(sum); err != nil {
		return "", nil, err
	}
	if thumb, err = Make(ctx, bytes.NewReader(original)); err != nil {
		return "", nil, err
	}
	return key, thumb, nil
}

// kept is the stored thumbnail at key, or nil when there is none or what is
// there is not a thumbnail of ours (it is then made again).
func kept(ctx context.Context, store *files.Store, key string) ([]byte, error) {
	obj, err := store.Open(ctx, key)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, maxThumbnailBytes+1))
	if err != nil {
		return nil, fmt.Errorf("thumbnail: reading %s: %w", key, err)
	}
	if !Valid(data) {
		return nil, nil
	}
	return data, nil
}

// Valid says whether data is a thumbnail as Make makes them: a JPEG of
// Width×Height, of at most maxThumbnailBytes. Its header says so without
// decoding it.
func Valid(data []byte) bool {
	if len(data) > maxThumbnailBytes {
		return false
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	return err == nil && cfg.Width == Width && cfg.Height == Height
}

func missing(err error) error {
	if apperr.CodeOf(err) == apperr.NotFound {
		return notShown("archivo no encontrado")
	}
	return err
}

// Make decodes a photo (JPEG, PNG, WebP or GIF) and returns its thumbnail: a JPEG
// of Width×Height with the photo fitted inside, its proportions kept, on a
// light grey ground; a JPEG of that size already is one, and is returned as
// it is. The same photo always makes the same bytes, so a report is the same
// whether its thumbnails were made now or long ago.
//
// Its header is read first: a photo over MaxPixels, or that is no image, is
// a *NotShown before anything is decoded; so is one whose decode would pass
// MaxScans or MaxDecodeWork, weighed before decoding when r can be read again
// (an io.ReadSeeker: Weigh), and as it is decoded in any case, so that even
// then its decode stops at the bound. Decoding waits its turn in its
// company's fair share of the decodes (fairshare.KeyFrom(ctx)) and within the
// process's decode budget, and stops when ctx ends, mid-photo.
func Make(ctx context.Context, r io.Reader) ([]byte, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if err := Weigh(ctx, rs); err != nil {
			return nil, err
		}
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("thumbnail: reading the photo again: %w", err)
		}
	}
	in := bufio.NewReader(reader{ctx, r})
	var header bytes.Buffer
	cfg, format, err := image.DecodeConfig(io.TeeReader(in, &header))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, notShown("no es una imagen legible (JPEG, PNG o GIF)")
	}
	if err := checkPixels(cfg); err != nil {
		return nil, err
	}
	if format == "jpeg" && cfg.Width == Width && cfg.Height == Height {
		// Redrawn, it would only become itself, at the cost of a decode.
		if _, err := io.Copy(&header, io.LimitReader(in, maxThumbnailBytes+1-int64(header.Len()))); err != nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, notShown("la imagen JPEG está dañada o incompleta")
		}
		if header.Len() <= maxThumbnailBytes {
			return header.Bytes(), nil
		}
	}
	var sof *frame
	if format == "jpeg" {
		sof = readFrame(bytes.NewReader(header.Bytes()))
	}
	need := decodeMemory(cfg, format, sof)
	if need > decodeBudget {
		return nil, notShown("%d×%d píxeles necesitarían %d MB para procesarse, más de %d MB", cfg.Width, cfg.Height, need>>20, decodeBudget>>20)
	}
	// The request's own other decodes may hold its company's places: its
	// deadline bounds this wait, not its patience (waitbudget.Without).
	release, err := decodeShare.Acquire(waitbudget.Without(ctx), fairshare.KeyFrom(ctx))
	if err != nil {
		return nil, err
	}
	defer release()
	weight := decodeWeight(need)
	if err := decoding.Acquire(ctx, weight); err != nil {
		return nil, err
	}
	defer decoding.Release(weight)
	decoded.Add(1)
	weighing := newInspector(format, cfg, header.Bytes())
	img, _, err := image.Decode(io.TeeReader(io.MultiReader(&header, in), weighing))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ns, over := overWork(weighing.err); over {
		return nil, ns
	}
	if err != nil {
		return nil, notShown("la imagen %s está dañada o incompleta", strings.ToUpper(format))
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, shrink(img), &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("thumbnail: encoding: %w", err)
	}
	return buf.Bytes(), nil
}

// samples is how many points a side of each thumbnail pixel averages: enough
// to smooth a photo's noise, and a cost (Width×Height×samples²) that does
// not grow with the photo.
const samples = 6

// shrink fits img into Width×Height, each pixel the mean of a grid of points
// of the area it covers.
func shrink(img image.Image) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, Width, Height))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.RGBA{235, 235, 235, 255}), image.Point{}, draw.Src)
	b := img.Bounds()
	w, h := Width, Height
	if b.Dx()*Height > b.Dy()*Width {
		h = max(1, b.Dy()*Width/b.Dx())
	} else {
		w = max(1, b.Dx()*Height/b.Dy())
	}
	x0, y0 := (Width-w)/2, (Height-h)/2
	ycc, _ := img.(*image.YCbCr)
	for y := range h {
		for x := range w {
			var r, g, bl, n uint32
			for sy := range samples {
				py := b.Min.Y + ((y*samples+sy)*2+1)*b.Dy()/(h*samples*2)
				for sx := range samples {
					px := b.Min.X + ((x*samples+sx)*2+1)*b.Dx()/(w*samples*2)
					if ycc != nil { // what JPEGs decode to, read without boxing each pixel
						c := ycc.YCbCrAt(px, py)
						cr, cg, cb := color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
						r, g, bl = r+uint32(cr), g+uint32(cg), bl+uint32(cb)
					} else {
						cr, cg, cb, _ := img.At(px, py).RGBA()
						r, g, bl = r+cr>>8, g+cg>>8, bl+cb>>8
					}
					n++
				}
			}
			out.SetRGBA(x0+x, y0+y, color.RGBA{uint8(r / n), uint8(g / n), uint8(bl / n), 255})
		}
	}
	return out
}

// reader is r, stopping with ctx's error once ctx ends: the decoder reads
// as it goes, so a decode stops within a few KB of its request's end.
type reader struct {
	ctx context.Context
	r   io.Reader
}

func (r reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// IsNotShown says whether err is a photo that cannot be shown, and why.
func IsNotShown(err error) (string, bool) {
	var ns *NotShown
	if errors.As(err, &ns) {
		return ns.Reason, true
	}
	return "", false
}
