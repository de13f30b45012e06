//go:build gcs || azblob

package files

import (
	"context"
	"errors"
	"io"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// The tagged builds open gs:// and azblob:// through gocloud.dev, whose
// drivers those stores' SDKs come with.
func init() {
	openCloud = func(ctx context.Context, url string) (bucket, error) {
		b, err := blob.OpenBucket(ctx, url)
		if err != nil {
			return nil, err
		}
		return cloudBucket{b}, nil
	}
}

type cloudBucket struct{ b *blob.Bucket }

func (c cloudBucket) write(ctx context.Context, key string, r io.Reader, _ int64, contentType string) error {
	err := c.b.Upload(ctx, key, r, &blob.WriterOptions{ContentType: contentType})
	if reason := cloudRefusal(err); reason != "" && ctx.Err() == nil {
		return &refused{reason: reason, err: err}
	}
	return err
}

// cloudRefusal is the reason a gocloud store refused a write, or "".
func cloudRefusal(err error) string {
	switch gcerrors.Code(err) {
	case gcerrors.ResourceExhausted:
		return RefusedFull
	case gcerrors.PermissionDenied:
		return RefusedDenied
	case gcerrors.DeadlineExceeded:
		return RefusedUnreachable
	}
	return ""
}

func (c cloudBucket) remove(ctx context.Context, key string) error {
	if err := c.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

type cloudObject struct{ *blob.Reader }

func (o cloudObject) modTime() time.Time { return o.ModTime() }

func (c cloudBucket) open(ctx context.Context, key string) (object, error) {
	r, err := c.b.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	return cloudObject{r}, nil
}

func (c cloudBucket) signedURL(ctx context.Context, key string, ttl time.Duration) (string, error) {
	return c.b.SignedURL(ctx, key, &blob.SignedURLOptions{Expiry: ttl})
}

func (c cloudBucket) list(ctx context.Context, prefix string, each func(Entry) error) error {
	it := c.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := each(Entry{Key: obj.Key, Modified: obj.ModTime}); err != nil {
			return err
		}
	}
}

func (c cloudBucket) close() error { return c.b.Close() }
