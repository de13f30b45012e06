package thumbnail

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
)

// A photo's decode is bounded by its work, not by its bytes: a 272 KB
// progressive JPEG of 6400×6400 and 3,000 scans cost 7 s of CPU, since Go's
// decoder visits every block of every scan, and a scan that codes all its
// blocks as one end-of-band run is a few dozen bytes. So before a photo is
// decoded its markers are read (cheaply: the entropy-coded data is skipped
// at memory speed) and the decode's work estimated from them; past MaxScans
// or MaxDecodeWork it is not decoded at all.
//
// The work is counted in sample visits, the cost of one sample of one
// progressive scan (about 0.75 ns of CPU on the 2-core machine the bounds
// were measured on). Each format's figures below are fitted to
// BenchmarkWorstAcceptedPhotos and the measurements in docs/decisions.md.
const (
	// MaxScans bounds the scans of a JPEG, as libjpeg-turbo's scan limit
	// (TJPARAM_SCANLIMIT, djpeg -maxscans) does. Encoders write 1 to 3
	// (baseline) or 6 to 12 (libjpeg's, mozjpeg's and Photoshop's
	// progressive scripts); the bombs write thousands.
	MaxScans = 100

	// MaxDecodeWork bounds a photo's estimated work: about 0.9 s of CPU,
	// so that no photo decoded costs over a second. Within it: any phone's
	// photo up to 50 megapixels (a 4:2:0 baseline JPEG of 50 MP and 25 MB,
	// or of 12 MP in 10 progressive scans: 0.2 s), and a PNG of 50
	// megapixels in RGBA; past it: the scan bombs, JPEGs of 50 MP at full
	// colour resolution and 25 MB of noise, interlaced RGBA PNGs over about
	// 40 MP.
	MaxDecodeWork = 1_200_000_000

	// jpegReconstructWork: a JPEG's inverse DCT and the image it writes,
	// per sample, once.
	jpegReconstructWork = 4
	// jpegEntropyByteWork: Huffman decoding, per byte of entropy-coded data.
	jpegEntropyByteWork = 30
	// pngRawByteWork: inflating and unfiltering, per byte of a PNG's raw
	// rows (or per pixel, when pixels are smaller than a byte); interlaced
	// (Adam7) PNGs are counted twice, as they decode at about half the speed.
	pngRawByteWork = 4
	// fileByteWork: inflating a PNG's or decoding a GIF's compressed
	// bytes; webpByteWork: a WebP's (VP8L's Huffman codes are the dearer).
	fileByteWork = 8
	webpByteWork = 20
	// webpPixelWork and gifPixelWork: decoding a WebP (VP8 or VP8L) or a
	// GIF's first frame, per pixel.
	webpPixelWork = 14
	gifPixelWork  = 4
)

// OverWork is why a photo is not decoded: its decode would pass MaxScans or
// MaxDecodeWork. Its text is a sentence a client can act on.
type OverWork struct {
	Scans int   // a JPEG's scans, when they are what is over
	Work  int64 // the work estimated
}

func (e *OverWork) Error() string {
	if e.Scans > MaxScans {
		return fmt.Sprintf("its JPEG has %d scans, over the %d a photo may have (a camera writes at most a dozen)", e.Scans, MaxScans)
	}
	return fmt.Sprintf("decoding it would take about %d million sample visits, over the %d million a photo may take (fewer pixels, scans or bytes would do)",
		e.Work/1_000_000, MaxDecodeWork/1_000_000)
}

// inspector reads a photo's bytes as they pass (it is an io.Writer) and
// estimates its decode's work from its markers, failing as soon as the
// work passes the bounds. It holds a few small buffers whatever the photo.
type inspector struct {
	format  string
	err     error // *OverWork once over a bound
	fixed   int64 // work known from the header
	perByte int64 // work per byte of the file (webp, png, gif)
	bytes   int64 // bytes of the file seen
	work    int64 // fixed, plus the bytes' and scans' work so far

	// JPEG
	st      jpegState
	marker  byte
	length  int    // the segment's body still to come
	body    []byte // SOFn and SOS bodies, kept whole
	keep    bool
	frame   *frame
	width   int64
	height  int64
	scans   int
	scanned int64 // sample visits of the scans so far
	entropy int64 // entropy-coded bytes so far
}

type jpegState int

const (
	jpegStart jpegState = iota // before SOI
	jpegStart2
	jpegFF     // expecting a marker's 0xFF
	jpegMarker // expecting the marker's byte
	jpegLen1
	jpegLen2
	jpegBody
	jpegEntropy   // in a scan's entropy-coded data
	jpegEntropyFF // after an 0xFF in it
	jpegDone      // after EOI: Go's decoder reads no further
)

// newInspector returns the inspector of a photo of format whose header
// says cfg; head is the file's first bytes (a PNG's header is read there).
func newInspector(format string, cfg image.Config, head []byte) *inspector {
	in := &inspector{format: format}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	switch format {
	case "png":
		in.fixed, in.perByte = pngWork(cfg, head), fileByteWork
	case "webp":
		in.fixed, in.perByte = pixels*webpPixelWork, webpByteWork
	case "gif":
		in.fixed, in.perByte = pixels*gifPixelWork, fileByteWork
	}
	in.work = in.fixed
	return in
}

// pngWork is a PNG's work from its header: its raw rows' bytes (at least a
// byte a pixel), twice for an interlaced one.
func pngWork(cfg image.Config, head []byte) int64 {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if len(head) < 29 || !bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")) || string(head[12:16]) != "IHDR" {
		return pixels * 8 * pngRawByteWork * 2 // not understood: the worst case
	}
	w, h := int64(binary.BigEndian.Uint32(head[16:])), int64(binary.BigEndian.Uint32(head[20:]))
	depth, colorType, interlace := int64(head[24]), head[25], head[28]
	channels := map[byte]int64{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colorType]
	raw := max(h*(1+(w*channels*depth+7)/8), pixels)
	if interlace != 0 {
		raw *= 2
	}
	return raw * pngRawByteWork
}

// Write reads p, the next bytes of the photo.
func (in *inspector) Write(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	in.bytes += int64(len(p))
	if in.format == "jpeg" {
		in.jpeg(p)
		in.work = in.fixed + in.scanned + in.entropy*jpegEntropyByteWork
	} else {
		in.work = in.fixed + in.bytes*in.perByte
	}
	if in.err == nil && in.work > MaxDecodeWork {
		in.err = &OverWork{Work: in.work}
	}
	if in.err != nil {
		return 0, in.err
	}
	return len(p), nil
}

// jpeg walks a JPEG's markers: the frame header (SOFn) says its samples,
// each scan header (SOS) which components the scan covers; the scans'
// entropy-coded data is skipped, counted in bytes.
func (in *inspector) jpeg(p []byte) {
	for len(p) > 0 && in.err == nil {
		switch in.st {
		case jpegStart, jpegStart2: // SOI, or this is no JPEG and its decode fails at once
			if want := map[jpegState]byte{jpegStart: 0xFF, jpegStart2: 0xD8}[in.st]; p[0] != want {
				in.st = jpegDone
				return
			}
			in.st, p = in.st+1, p[1:]
		case jpegFF:
			if p[0] == 0xFF {
				in.st = jpegMarker
			} // else junk between segments, which Go's decoder skips
			p = p[1:]
		case jpegMarker:
			m := p[0]
			p = p[1:]
			switch {
			case m == 0xFF: // fill
			case m == 0xD9: // EOI
				in.st = jpegDone
			case m == 0xD8 || m >= 0xD0 && m <= 0xD7 || m == 0x01 || m == 0x00:
				in.st = jpegFF
			default:
				in.marker, in.st = m, jpegLen1
			}
		case jpegLen1:
			in.length = int(p[0]) << 8
			in.st, p = jpegLen2, p[1:]
		case jpegLen2:
			in.length = max(in.length|int(p[0])-2, 0)
			p = p[1:]
			in.keep = in.marker == 0xDA || in.marker >= 0xC0 && in.marker <= 0xCF && in.marker != 0xC4 && in.marker != 0xC8 && in.marker != 0xCC
			in.body = in.body[:0]
			in.st = jpegBody
			if in.length == 0 {
				in.segment()
			}
		case jpegBody:
			n := min(in.length, len(p))
			if in.keep {
				in.body = append(in.body, p[:n]...)
			}
			in.length -= n
			p = p[n:]
			if in.length == 0 {
				in.segment()
			}
		case jpegEntropy:
			i := bytes.IndexByte(p, 0xFF)
			if i < 0 {
				in.entropy += int64(len(p))
				return
			}
			in.entropy += int64(i)
			in.st, p = jpegEntropyFF, p[i+1:]
		case jpegEntropyFF:
			m := p[0]
			switch {
			case m == 0x00 || m >= 0xD0 && m <= 0xD7: // a stuffed 0xFF, or a restart
				in.entropy += 2
				in.st, p = jpegEntropy, p[1:]
			case m == 0xFF:
				p = p[1:]
			default:
				in.st = jpegMarker // the scan ends: the byte is the next marker
			}
		case jpegDone:
			return
		}
	}
}

// segment handles a whole segment: a frame header fixes the samples, a
// scan header adds the samples of its components.
func (in *inspector) segment() {
	in.st = jpegFF
	switch {
	case in.marker == 0xDA:
		in.scans++
		if in.scans > MaxScans {
			in.err = &OverWork{Scans: in.scans, Work: in.work}
			return
		}
		in.scanned += in.scanSamples()
		in.st = jpegEntropy
	case in.keep && in.frame == nil:
		b := in.body
		if len(b) < 6 {
			return
		}
		in.height, in.width = int64(b[1])<<8|int64(b[2]), int64(b[3])<<8|int64(b[4])
		in.frame = readFrame(bytes.NewReader(append([]byte{0xFF, 0xD8, 0xFF, in.marker, byte((len(b) + 2) >> 8), byte(len(b) + 2)}, b...)))
		if in.frame == nil {
			return
		}
		in.fixed = in.frameSamples(nil) * jpegReconstructWork
	}
}

// scanSamples is the samples of the components the scan in body covers:
// every one of them is visited, whatever the scan codes.
func (in *inspector) scanSamples() int64 {
	if in.frame == nil || len(in.body) < 1 {
		return 0
	}
	n := int(in.body[0])
	if len(in.body) < 1+2*n {
		return 0
	}
	ids := make([]byte, n)
	for i := range n {
		ids[i] = in.body[1+2*i]
	}
	return in.frameSamples(ids)
}

// frameSamples is the samples of the frame's components with the given
// ids (all of them when ids is nil).
func (in *inspector) frameSamples(ids []byte) int64 {
	f := in.frame
	pixels := in.width * in.height
	total := int64(0)
	for i, c := range f.components {
		if ids != nil && !bytes.Contains(ids, []byte{f.ids[i]}) {
			continue
		}
		total += pixels * int64(c.h*c.v) / int64(f.hmax*f.vmax)
	}
	return total
}
