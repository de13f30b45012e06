package thumbnail

import (
	"bufio"
	"encoding/binary"
	"image"
	"image/color"
	"io"
	"runtime"
)

// decodeBudget bounds the memory that decoding originals holds at once, in
// the whole process, and a photo whose decode alone would need more is not
// decoded. Every photo within MaxPixels fits but unusual ones: a JPEG of 50
// megapixels needs 75 MB (150 at full colour resolution), an 8-bit PNG
// 200; refused are progressive JPEGs over about 26 megapixels (Go's decoder
// keeps 4 bytes of every sample until the last scan) and 16-bit PNGs over
// 26. Each decode also weighs at least a core's share of it: decoding is
// all CPU, so more decodes than cores at once would only hold more memory,
// not finish sooner.
const decodeBudget = 200 << 20

// decodeWeight is what decoding a photo of this header holds, as weighed
// against decodeBudget.
func decodeWeight(need int64) int64 {
	return max(need, decodeBudget/int64(runtime.GOMAXPROCS(0)))
}

// decodeMemory estimates the bytes that decoding a photo holds: the image
// it decodes to and, for a progressive JPEG, the coefficients Go's decoder
// keeps of every block until the last scan (4 bytes a sample). sof is the
// JPEG's frame header, nil for other formats.
func decodeMemory(cfg image.Config, format string, sof *frame) int64 {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	switch {
	case format == "jpeg" && sof != nil:
		samples := int64(0)
		for _, c := range sof.components {
			samples += pixels * int64(c.h*c.v) / int64(sof.hmax*sof.vmax)
		}
		if sof.progressive {
			return samples * 5
		}
		return samples
	case format == "jpeg":
		return pixels * 3 * 5 // a frame not understood: the worst case
	}
	switch cfg.ColorModel {
	case color.GrayModel, color.AlphaModel:
		return pixels
	case color.Gray16Model, color.Alpha16Model:
		return pixels * 2
	case color.RGBA64Model, color.NRGBA64Model:
		return pixels * 8
	}
	if _, paletted := cfg.ColorModel.(color.Palette); paletted {
		return pixels
	}
	return pixels * 4
}

// frame is what a JPEG's frame header (SOFn) says of its decoding.
type frame struct {
	progressive bool
	components  []struct{ h, v int }
	ids         []byte // the components' selectors, as scans name them
	hmax, vmax  int
}

// readFrame reads a JPEG's markers up to its frame header, which
// image.DecodeConfig reads past without saying whether the JPEG is
// progressive or how its colour is subsampled; nil if it finds none.
func readFrame(r io.Reader) *frame {
	br := bufio.NewReader(r)
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xFF, 0xD8} {
		return nil
	}
	for {
		var m [4]byte
		if _, err := io.ReadFull(br, m[:2]); err != nil || m[0] != 0xFF {
			return nil
		}
		for m[1] == 0xFF { // fill bytes
			if m[1], _ = br.ReadByte(); m[1] == 0 {
				return nil
			}
		}
		if _, err := io.ReadFull(br, m[2:]); err != nil {
			return nil
		}
		length := int(binary.BigEndian.Uint16(m[2:])) - 2
		if length < 0 {
			return nil
		}
		marker := m[1]
		if marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
			body := make([]byte, length)
			if _, err := io.ReadFull(br, body); err != nil || length < 6 {
				return nil
			}
			n := int(body[5])
			if length < 6+3*n || n == 0 {
				return nil
			}
			f := &frame{progressive: marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE, hmax: 1, vmax: 1}
			for i := range n {
				hv := body[6+3*i+1]
				h, v := max(1, int(hv>>4)), max(1, int(hv&0x0F))
				f.components = append(f.components, struct{ h, v int }{h, v})
				f.ids = append(f.ids, body[6+3*i])
				f.hmax, f.vmax = max(f.hmax, h), max(f.vmax, v)
			}
			return f
		}
		if _, err := br.Discard(length); err != nil {
			return nil
		}
	}
}
