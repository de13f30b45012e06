// Package thumbtest makes, in memory, the images that tests and benchmarks
// of photo decoding need and no Go encoder writes: progressive JPEGs of as
// many scans as asked (the scan bomb), and PNGs of as many pixels as asked
// in a few KB (the pixel bomb). Each is valid as far as Go's decoders go,
// and decodes to a flat grey or black picture; nothing is read from disk, so
// no large fixture is kept in the repository.
package thumbtest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// ProgressiveJPEG is a w×h greyscale progressive JPEG of scans scans (at
// least 2): its DC scan, a first AC scan of the whole band (1 to 63), and
// then scans-2 refinements of that band, each the same. Its AC scans code
// every block as part of an end-of-band run, so a scan is a few dozen bytes
// however many blocks it covers, while a decoder still visits every
// coefficient of the band of every block in each refinement: the shape of
// the 272 KB JPEG of issue 34 (6400×6400, 3,000 scans).
func ProgressiveJPEG(w, h, scans int) []byte {
	scans = max(scans, 2)
	blocks := ((w + 7) / 8) * ((h + 7) / 8)
	var out bytes.Buffer
	out.Write([]byte{0xFF, 0xD8})
	// DQT: table 0, every step 1.
	dqt := append([]byte{0}, bytes.Repeat([]byte{1}, 64)...)
	segment(&out, 0xDB, dqt)
	// SOF2: 8-bit samples, h×w, one component (id 1, 1×1, table 0).
	segment(&out, 0xC2, []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 1, 1, 0x11, 0})
	// DHT: DC table 0 codes category 0 ("no difference") as 0, and one
	// other symbol so that the table is complete; AC table 0 codes the 15
	// end-of-band runs (symbols 0x00 to 0xE0) in 4 bits each.
	dc := make([]byte, 0, 19)
	dc = append(dc, 0x00, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	ac := []byte{0x10, 0, 0, 0, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for r := range 15 {
		ac = append(ac, byte(r<<4))
	}
	segment(&out, 0xC4, append(dc, ac...))

	// The DC scan: every block's difference 0, a 0 bit each.
	segment(&out, 0xDA, []byte{1, 1, 0x00, 0, 0, 0x00})
	var bw bitWriter
	for range blocks {
		bw.write(0, 1)
	}
	bw.flush(&out)
	// The AC scans: the first (Ah 0, Al 1), then the refinements (Ah 1,
	// Al 0), each coding every block as end-of-band runs.
	for i := range scans - 1 {
		approx := byte(0x01)
		if i > 0 {
			approx = 0x10
		}
		segment(&out, 0xDA, []byte{1, 1, 0x00, 1, 63, approx})
		var bw bitWriter
		for left := blocks; left > 0; {
			run := min(left, 32767)
			r := 0
			for 1<<(r+1) <= run {
				r++
			}
			bw.write(uint32(r), 4) // the symbol r<<4: its code is r, in 4 bits
			bw.write(uint32(run-1<<r), r)
			left -= run
		}
		bw.flush(&out)
	}
	out.Write([]byte{0xFF, 0xD9})
	return out.Bytes()
}

func segment(out *bytes.Buffer, marker byte, body []byte) {
	out.Write([]byte{0xFF, marker, byte((len(body) + 2) >> 8), byte(len(body) + 2)})
	out.Write(body)
}

// bitWriter writes entropy-coded data: bits from the most significant, a 0
// stuffed after each 0xFF, padded with 1 bits.
type bitWriter struct {
	buf   []byte
	acc   uint32
	nbits int
}

func (b *bitWriter) write(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		b.acc = b.acc<<1 | (v>>i)&1
		b.nbits++
		if b.nbits == 8 {
			b.emit(byte(b.acc))
			b.acc, b.nbits = 0, 0
		}
	}
}

func (b *bitWriter) emit(c byte) {
	b.buf = append(b.buf, c)
	if c == 0xFF {
		b.buf = append(b.buf, 0)
	}
}

func (b *bitWriter) flush(out *bytes.Buffer) {
	if b.nbits > 0 {
		b.emit(byte(b.acc<<(8-b.nbits) | (1<<(8-b.nbits) - 1)))
	}
	out.Write(b.buf)
	b.buf, b.acc, b.nbits = b.buf[:0], 0, 0
}

// PNG colour types.
const (
	Gray      = 0
	RGB       = 2
	GrayAlpha = 4
	RGBA      = 6
)

// PNG is a w×h PNG of colorType at depth bits a sample, interlaced (Adam7)
// or not, every row filtered with filter (0 none to 4 Paeth) and every byte
// of its pixels 0: a picture of millions of pixels in tens of KB (zlib
// compresses runs of zeros about a thousand to one), the shape of issue
// 34's 48 KB PNG of 7000×7000.
func PNG(w, h, colorType, depth int, interlaced bool, filter byte) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = byte(depth), byte(colorType)
	if interlaced {
		ihdr[12] = 1
	}
	chunk(&out, "IHDR", ihdr)

	channels := map[int]int{Gray: 1, RGB: 3, GrayAlpha: 2, RGBA: 4}[colorType]
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	row := make([]byte, 1+(w*channels*depth+7)/8)
	writeRows := func(width, rows int) {
		if width == 0 || rows == 0 {
			return
		}
		r := row[:1+(width*channels*depth+7)/8]
		r[0] = filter
		for range rows {
			_, _ = zw.Write(r)
		}
	}
	if !interlaced {
		writeRows(w, h)
	} else {
		// Adam7's passes: their first column and row, and their steps.
		for _, p := range [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}} {
			writeRows((w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3])
		}
	}
	_ = zw.Close()
	chunk(&out, "IDAT", z.Bytes())
	chunk(&out, "IEND", nil)
	return out.Bytes()
}

func chunk(out io.Writer, kind string, data []byte) {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:], uint32(len(data)))
	copy(head[4:], kind)
	_, _ = out.Write(head[:])
	_, _ = out.Write(data)
	crc := crc32.NewIEEE()
	_, _ = crc.Write(head[4:])
	_, _ = crc.Write(data)
	_ = binary.Write(out, binary.BigEndian, crc.Sum32())
}
