// Package storageref defines a photo's storage reference: a plain file name
// with an image extension and no directory part, so that it can never name a
// file outside the photo folder of the store. The ent schema and the file
// store both check it.
package storageref

import "regexp"

// Pattern matches a valid storage reference.
var Pattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.(?i:jpe?g|png|webp|gif|heic)$`)

// Valid reports whether ref is a valid storage reference.
func Valid(ref string) bool { return Pattern.MatchString(ref) }
