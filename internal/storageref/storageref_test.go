package storageref

import (
	"strings"
	"testing"
)

// Valid and Pattern agree on references near every edge of the rule: the
// name's length, its first character, each character class, the extension
// in every case (Unicode folds included), and dots anywhere.
func TestValidIsPattern(t *testing.T) {
	cases := []string{
		"", ".jpg", "a.jpg", "A.JPG", "a.JpEg", "0.png", "a.webp", "a.gif", "a.heic", "a.HEIC",
		"a.jpgx", "a.jp", "a.tiff", "a", "a.", "a..jpg", "a.b.png", "-a.png", "_a.png", ".a.png",
		"a-b_c.d.png", "a/b.png", "../a.png", "a b.png", "a\x00.png", "a.png\n", "\na.png",
		"é.png", "a.pnG", "a.ſng", "a.heıc", "a.\u212aif", "a.jpeg.", "a.jpg.jpg",
		strings.Repeat("a", 201) + ".jpg", strings.Repeat("a", 202) + ".jpg",
		strings.Repeat("a", 200) + "..jpg", strings.Repeat("a", 201) + "..jpg",
		strings.Repeat("a.", 100) + "a.png", strings.Repeat("a.", 101) + ".png",
	}
	for _, ref := range cases {
		if got, want := Valid(ref), Pattern.MatchString(ref); got != want {
			t.Errorf("Valid(%q) = %v, the pattern says %v", ref, got, want)
		}
	}
}

func FuzzValidIsPattern(f *testing.F) {
	for _, seed := range []string{"a.jpg", "A-b_c.JPEG", "..png", "a.ſ"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if got, want := Valid(ref), Pattern.MatchString(ref); got != want {
			t.Errorf("Valid(%q) = %v, the pattern says %v", ref, got, want)
		}
	})
}

func TestCheckNamesTheRule(t *testing.T) {
	if err := Check("photo.jpg"); err != nil {
		t.Errorf("Check(photo.jpg) = %v", err)
	}
	if err := Check("../photo.jpg"); err == nil || !strings.Contains(err.Error(), "file name") {
		t.Errorf("Check(../photo.jpg) = %v, want the rule", err)
	}
}

func BenchmarkValid(b *testing.B) {
	ref := "3f0c1a2b-9d8e-4f7a-b6c5-d4e3f2a1b0c9.jpg"
	b.Run("pattern", func(b *testing.B) {
		for b.Loop() {
			Pattern.MatchString(ref)
		}
	})
	b.Run("valid", func(b *testing.B) {
		for b.Loop() {
			Valid(ref)
		}
	})
}
