package files

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Bucket is an S3 bucket, or one of an S3-compatible store (MinIO, R2,
// GCS's interoperability endpoint), through minio-go: a client made for
// exactly these stores, a tenth of the AWS SDK's modules and size.
type s3Bucket struct {
	client *minio.Client
	name   string
}

// s3Parameters are the query parameters an s3:// URL may carry; any other is
// refused rather than ignored, so a typo cannot silently send files elsewhere.
var s3Parameters = []string{"region", "endpoint", "use_path_style"}

// openS3 opens s3://bucket?region=...&endpoint=...&use_path_style=true (the
// form gocloud.dev's s3blob took, so existing settings keep working).
// Credentials come from the usual places, in the AWS SDK's order: the
// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY environment, the shared
// credentials file (AWS_PROFILE), then the instance's or task's role.
func openS3(raw string) (*s3Bucket, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("files: %q is not s3://bucket?region=...", raw)
	}
	q := u.Query()
	for name := range q {
		if !slices.Contains(s3Parameters, name) {
			return nil, fmt.Errorf("files: s3:// URLs take %s, not %q", strings.Join(s3Parameters, ", "), name)
		}
	}
	region := q.Get("region")
	if region == "" {
		region = cmp.Or(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"))
	}
	endpoint, secure := "s3.amazonaws.com", true
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || eu.Host == "" || eu.Scheme != "http" && eu.Scheme != "https" {
			return nil, fmt.Errorf("files: the s3 endpoint %q is not an http:// or https:// URL", e)
		}
		endpoint, secure = eu.Host, eu.Scheme == "https"
	}
	lookup := minio.BucketLookupAuto
	if v := q.Get("use_path_style"); v != "" {
		pathStyle, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("files: use_path_style=%q is not true or false", v)
		}
		if pathStyle {
			lookup = minio.BucketLookupPath
		}
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds: credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.FileAWSCredentials{},
			&credentials.IAM{},
		}),
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	return &s3Bucket{client: client, name: u.Host}, nil
}

func (b *s3Bucket) write(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	_, err := b.client.PutObject(ctx, b.name, key, r, size, minio.PutObjectOptions{ContentType: contentType})
	if reason := s3Refusal(err); reason != "" && ctx.Err() == nil {
		return &refused{reason: reason, err: err}
	}
	return err
}

// s3Refusal is the reason an S3 store refused a put, from its answer, or ""
// when the answer is not about the store's state.
func s3Refusal(err error) string {
	if err == nil {
		return ""
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.StatusCode == http.StatusInsufficientStorage, resp.Code == "XMinioStorageFull",
		resp.Code == "XMinioAdminBucketQuotaExceeded", resp.Code == "QuotaExceeded":
		return RefusedFull
	case resp.StatusCode == http.StatusForbidden, resp.Code == "AccessDenied":
		return RefusedDenied
	case resp.StatusCode == http.StatusServiceUnavailable, resp.Code == "SlowDown", resp.Code == "ServiceUnavailable",
		resp.Code == "XMinioServerNotInitialized":
		return RefusedUnreachable
	}
	// No answer at all: the endpoint refused the connection or timed out.
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr != nil {
		return RefusedUnreachable
	}
	return ""
}

func (b *s3Bucket) remove(ctx context.Context, key string) error {
	return b.client.RemoveObject(ctx, b.name, key, minio.RemoveObjectOptions{})
}

type s3Object struct {
	*minio.Object
	modified time.Time
}

func (o s3Object) modTime() time.Time { return o.modified }

func (b *s3Bucket) open(ctx context.Context, key string) (object, error) {
	obj, err := b.client.GetObject(ctx, b.name, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	// GetObject sends nothing until asked; Stat does, and tells a missing key.
	info, err := obj.Stat()
	if err != nil {
		obj.Close()
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, errNotFound
		}
		return nil, err
	}
	return s3Object{obj, info.LastModified}, nil
}

func (b *s3Bucket) signedURL(ctx context.Context, key string, ttl time.Duration) (string, error) {
	u, err := b.client.PresignedGetObject(ctx, b.name, key, ttl, nil)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

func (b *s3Bucket) list(ctx context.Context, prefix string, each func(Entry) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the listing goes on in the background until its context ends
	for info := range b.client.ListObjectsIter(ctx, b.name, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if info.Err != nil {
			return info.Err
		}
		if err := each(Entry{Key: info.Key, Modified: info.LastModified}); err != nil {
			return err
		}
	}
	return nil
}

func (b *s3Bucket) close() error { return nil }
