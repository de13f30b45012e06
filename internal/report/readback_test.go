package report_test

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// needPoppler skips a test where poppler-utils is missing (.ci/run
// installs it).
func needPoppler(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " (poppler-utils) is not installed: .ci/run installs it")
		}
	}
}

// pdfFile writes data to a file of the test's.
func pdfFile(t *testing.T, data []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// layoutText is the document's text as pdftotext -layout reads it, its
// spaces collapsed.
func layoutText(t *testing.T, file string) string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-layout", file, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// word is one word of a page as pdftotext -bbox places it, in points from
// the page's top left corner.
type word struct {
	page                   int
	xMin, yMin, xMax, yMax float64
	text                   string
}

var (
	pageTag = regexp.MustCompile(`<page `)
	wordTag = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// words are the document's words, page by page (from 1), in pdftotext's
// order.
func words(t *testing.T, file string) []word {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", file, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	var all []word
	for page, text := range pageTag.Split(string(out), -1)[1:] {
		for _, m := range wordTag.FindAllStringSubmatch(text, -1) {
			w := word{page: page + 1, text: strings.NewReplacer("&amp;", "&", "&quot;", `"`, "&lt;", "<", "&gt;", ">").Replace(m[5])}
			w.xMin, _ = strconv.ParseFloat(m[1], 64)
			w.yMin, _ = strconv.ParseFloat(m[2], 64)
			w.xMax, _ = strconv.ParseFloat(m[3], 64)
			w.yMax, _ = strconv.ParseFloat(m[4], 64)
			all = append(all, w)
		}
	}
	return all
}

// pageImage is page n rendered at 72 dpi: a pixel is a point, as -bbox
// gives them.
func pageImage(t *testing.T, file string, n int) image.Image {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "page")
	if err := exec.Command("pdftoppm", "-png", "-r", "72", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), "-singlefile", file, prefix).Run(); err != nil {
		t.Fatalf("rendering page %d: %v", n, err)
	}
	f, err := os.Open(prefix + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// blank reports whether the pixel at x, y is the page's white.
func blank(img image.Image, x, y float64) bool {
	r, g, b, _ := img.At(int(x), int(y)).RGBA()
	return r>>8 > 240 && g>>8 > 240 && b>>8 > 240
}

// line is the words of page's line at y (within half a point), from x0 to
// x1, joined.
func line(all []word, page int, y, x0, x1 float64) string {
	var out []string
	for _, w := range all {
		if w.page == page && w.yMin > y-0.5 && w.yMin < y+0.5 && w.xMin >= x0-0.5 && w.xMax <= x1+0.5 {
			out = append(out, w.text)
		}
	}
	return strings.Join(out, " ")
}

func (w word) String() string {
	return fmt.Sprintf("%q on page %d at %.0f,%.0f", w.text, w.page, w.xMin, w.yMin)
}
