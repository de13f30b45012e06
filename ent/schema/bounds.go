package schema

import (
	"fmt"
	"unicode/utf8"
)

// Bounds of the text a write takes, in characters (Unicode code points, as a
// person counts them, and as PostgreSQL's varchar(n) does). Each is the
// field's validator below, which records.Validate runs for every writer (the
// API, import, the generator), and is stated in the GraphQL schema's
// descriptions. Without one, a 20 MB description was taken through the
// multipart transport and then cost seconds of every PDF rendering.
const (
	// MaxNameRunes bounds the names of environments, items and materials,
	// and a property's neighbourhood and city.
	MaxNameRunes = 128
	// MaxDescriptionRunes bounds the free comments of environments and
	// items, and a property's detail: about a page of text, far beyond what
	// an inspector writes of one room or item.
	MaxDescriptionRunes = 2000
	// MaxCodeRunes bounds a property's code and type, and an approval code.
	MaxCodeRunes = 64
	// MaxAddressRunes bounds a property's street address.
	MaxAddressRunes = 256
	// MaxSignerNameRunes bounds a signer's name, printed on the PDF's
	// signature line, and the actor an event names.
	MaxSignerNameRunes = 200
	// MaxCompanyNameRunes bounds a management company's name, printed at
	// the top of its reports.
	MaxCompanyNameRunes = 200
)

// maxRunes is the validator of a text column kept as text (no varchar(n)
// to migrate): at most n characters.
func maxRunes(n int) func(string) error {
	return func(s string) error {
		if utf8.RuneCountInString(s) > n {
			return fmt.Errorf("over %d characters", n)
		}
		return nil
	}
}
