// Package storageref defines a photo's storage reference: a plain file name
// with an image extension and no directory part, so that it can never name a
// file outside the photo folder of the store. The ent schema and the file
// store both check it.
package storageref

import (
	"errors"
	"regexp"
	"strings"
)

// Pattern is the rule as a regular expression, as the API's documentation
// states it. Valid is what checks it: the same rule without the regexp
// engine, whose backtracking over the bounded repeat cost a seventh of a
// bulk load's CPU (issue 39). TestValidIsPattern holds the two alike.
var Pattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.(?i:jpe?g|png|webp|gif|heic)$`)

// maxName is how long the name before the extension may be.
const maxName = 201

// imageExtensions are the extensions a reference may end in, in any case.
var imageExtensions = []string{"jpg", "jpeg", "png", "webp", "gif", "heic"}

// Valid reports whether ref is a valid storage reference: a letter or digit,
// up to 200 more of letters, digits, '.', '_' and '-', then '.' and an image
// extension.
func Valid(ref string) bool {
	// The extension holds no dot, so it follows the last one.
	dot := strings.LastIndexByte(ref, '.')
	if dot < 1 || dot > maxName || !isImageExtension(ref[dot+1:]) {
		return false
	}
	if !isLetterOrDigit(ref[0]) {
		return false
	}
	for i := 1; i < dot; i++ {
		if c := ref[i]; !isLetterOrDigit(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// errInvalid is the reason Check gives.
var errInvalid = errors.New("a storage reference is a file name (letters, digits, '.', '_', '-'; at most 201 before the extension) ending in .jpg, .jpeg, .png, .webp, .gif or .heic")

// Check is Valid as ent's field validators take it.
func Check(ref string) error {
	if !Valid(ref) {
		return errInvalid
	}
	return nil
}

func isImageExtension(ext string) bool {
	for _, e := range imageExtensions {
		// EqualFold folds as the pattern's (?i) does (Unicode simple folding).
		if strings.EqualFold(ext, e) {
			return true
		}
	}
	return false
}

func isLetterOrDigit(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
