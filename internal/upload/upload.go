// Package upload takes photos sent to the service: checked by what they
// hold, not by what they are called; bounded in size; streamed to the blob
// store with their SHA-256 as they arrive; and decoded once, into the
// thumbnail reports draw, which is also the proof that they are images.
package upload

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// DefaultMaxPhotoBytes bounds a photo: a phone's 12-megapixel JPEG is 3 to
// 6 MB, a 50-megapixel one about 20.
const DefaultMaxPhotoBytes = 25 << 20

// Field is the argument a refused photo is named by.
const Field = "file"

// Photo is a stored upload.
type Photo struct {
	// Reference is its storage reference: the photo's id and the extension
	// of the type its content is.
	Reference string
	SHA256    string
	Bytes     int64
}

// extensions are the types taken, by what http.DetectContentType reads in
// their first bytes (the WHATWG sniffing rules).
var extensions = map[string]string{"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp"}

var errTooLarge = errors.New("upload: over the bound")

// Store takes the photo r holds (size bytes, or -1 when unknown) as the
// photo id: a JPEG, PNG or WebP of at most maxBytes that decodes within
// thumbnail.MaxPixels, thumbnail.MaxScans and thumbnail.MaxDecodeWork (its
// decode is bounded by its work, not its bytes). Anything else is INVALID_ARGUMENT naming Field, and
// leaves nothing stored.
func Store(ctx context.Context, fs *files.Store, id uuid.UUID, r io.Reader, size, maxBytes int64) (Photo, error) {
	if size > maxBytes {
		return Photo{}, tooLarge(size, maxBytes)
	}
	in := bufio.NewReader(r)
	head, err := in.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) {
		return Photo{}, err
	}
	kind := http.DetectContentType(head)
	ext, ok := extensions[kind]
	if !ok {
		return Photo{}, apperr.InvalidField(Field, "not a JPEG, PNG or WebP image: its content reads as %s", kind)
	}
	ref := id.String() + "." + ext
	key, err := files.PhotoKey(ref)
	if err != nil {
		return Photo{}, err
	}
	counted := &bounded{r: in, left: maxBytes}
	sum, err := fs.PutFrom(ctx, key, counted, size)
	if errors.Is(err, errTooLarge) {
		return Photo{}, tooLarge(-1, maxBytes)
	}
	if err != nil {
		return Photo{}, err
	}
	// Made now, from the stored file (the digest checked on the way): the
	// only decode the photo ever costs, and what shows it is an image.
	if _, err := thumbnail.For(ctx, fs, ref, sum); err != nil {
		_ = fs.Delete(context.WithoutCancel(ctx), key)
		if notShown, ok := errors.AsType[*thumbnail.NotShown](err); ok {
			if notShown.Over != nil {
				return Photo{}, apperr.InvalidField(Field, "the photo is refused: %s", notShown.Over.Error())
			}
			return Photo{}, apperr.InvalidField(Field, "not a readable %s image of at most %d megapixels (%s)", ext, thumbnail.MaxPixels/1_000_000, notShown.Reason)
		}
		return Photo{}, err
	}
	return Photo{Reference: ref, SHA256: sum, Bytes: maxBytes - counted.left}, nil
}

func tooLarge(size, maxBytes int64) error {
	if size < 0 {
		return apperr.InvalidField(Field, "the photo is over the %d bytes allowed", maxBytes)
	}
	return apperr.InvalidField(Field, "the photo is %d bytes, over the %d allowed", size, maxBytes)
}

// bounded reads at most left bytes, and fails past them.
type bounded struct {
	r    io.Reader
	left int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooLarge
	}
	return n, err
}
