package blob

import (
	"context"
	"fmt"
	"io"
	"net/url"

	gcblob "gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// Bucket stores blobs in an object store through the Go CDK. S3 and
// S3-compatible servers (MinIO, Ceph RGW, SeaweedFS, R2) are supported by
// OpenBucket; NewBucket accepts a bucket of any Go CDK driver.
//
// Object stores make a PUT visible only once it completes, so an aborted
// Put leaves nothing behind; an abandoned multipart upload is aborted by
// the SDK, and a bucket lifecycle rule that expires incomplete multipart
// uploads covers a process that dies mid-way.
type Bucket struct {
	b *gcblob.Bucket
}

// OpenBucket opens an s3:// bucket URL. The host is the bucket name;
// query parameters configure the client:
//
//   - region: the AWS region (required by the SDK; any value for most
//     S3-compatible servers, e.g. us-east-1)
//   - endpoint: base URL of an S3-compatible server, e.g.
//     http://127.0.0.1:9000; default: AWS
//   - use_path_style=true: address the bucket in the path rather than the
//     host name, as local servers need
//   - disable_https=true: talk plain HTTP to the endpoint
//   - prefix: a key prefix within the bucket, e.g. prefix=switchyard/
//   - anonymous=true: send unsigned requests
//
// Credentials come from the usual AWS sources (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, shared config files, instance roles). Example
// for a local MinIO:
//
//	s3://files?region=us-east-1&endpoint=http://127.0.0.1:9000&use_path_style=true&disable_https=true
func OpenBucket(ctx context.Context, rawURL string) (*Bucket, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob: parsing bucket URL: %w", err)
	}
	if u.Scheme != s3blob.Scheme {
		return nil, fmt.Errorf("blob: bucket URL scheme %q: want %s://", u.Scheme, s3blob.Scheme)
	}
	b, err := gcblob.OpenBucket(ctx, rawURL)
	if err != nil {
		// The URL may carry credentials in its query; name only the bucket.
		return nil, fmt.Errorf("blob: opening bucket %s: %w", u.Host, err)
	}
	return NewBucket(b), nil
}

// NewBucket wraps an open Go CDK bucket. The Bucket takes ownership: its
// Close closes b.
func NewBucket(b *gcblob.Bucket) *Bucket { return &Bucket{b: b} }

// Put implements Store.
func (s *Bucket) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := ValidKey(key); err != nil {
		return 0, err
	}
	// Cancelling the writer's context is the Go CDK's way to abort a
	// write; Close alone would commit what was written so far.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.b.NewWriter(wctx, key, &gcblob.WriterOptions{
		// The bytes are served with the type stored in the metadata
		// store; a fixed type keeps the driver from sniffing.
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return 0, fmt.Errorf("blob: writing %s: %w", key, err)
	}
	n, err := io.Copy(w, ctxReader{ctx, r})
	if err != nil {
		cancel()
		_ = w.Close()
		return n, fmt.Errorf("blob: writing %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return n, fmt.Errorf("blob: writing %s: %w", key, err)
	}
	return n, nil
}

// Open implements Store. The returned Object fetches bytes with ranged
// GETs from the offset of its first read after a Seek.
func (s *Bucket) Open(ctx context.Context, key string) (Object, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	r, err := s.b.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("blob: opening %s: %w", key, err)
	}
	return r, nil
}

// Delete implements Store.
func (s *Bucket) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	err := s.b.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("blob: deleting %s: %w", key, err)
	}
	return nil
}

// Close implements Store.
func (s *Bucket) Close() error { return s.b.Close() }

var _ Store = (*Bucket)(nil)
