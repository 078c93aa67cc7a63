package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Bucket stores blobs in S3 or an S3-compatible object store (MinIO,
// Ceph RGW, SeaweedFS, R2) through minio-go, a client of a tenth the
// size of the AWS SDK.
//
// Object stores make a PUT visible only once it completes, so an aborted
// Put leaves nothing behind. A blob larger than one part goes up as a
// multipart upload, which Put aborts when it fails; a bucket lifecycle
// rule that expires incomplete multipart uploads covers a process that
// dies mid-way.
type Bucket struct {
	calls     s3Calls
	transport *http.Transport
	bucket    string
	prefix    string
}

// s3Calls are the three minio-go calls a Bucket makes, held as method
// values rather than as the client. A Bucket is used as a Store, and once
// a type is converted to an interface Go's linker keeps every exported
// method of every type reachable from it, fields included, whenever any
// linked code looks methods up by name through reflection (Caddy's
// templates do): a *minio.Client field linked the client's whole API,
// from bucket replication to object lock, for these three calls, 1.3 MB
// of binary (README.md, "Binary size").
type s3Calls struct {
	put    func(ctx context.Context, bucket, key string, r io.Reader, size int64, opts minio.PutObjectOptions) (minio.UploadInfo, error)
	get    func(ctx context.Context, bucket, key string, opts minio.GetObjectOptions) (io.ReadCloser, minio.ObjectInfo, http.Header, error)
	remove func(ctx context.Context, bucket, key string, opts minio.RemoveObjectOptions) error
}

// partSize is the size of every part of a multipart upload but the last,
// the least S3 accepts. Put holds one part in memory at a time, and a
// blob up to this size goes up in a single PUT.
const partSize = 5 << 20

// bucketParams are the query parameters OpenBucket understands.
var bucketParams = []string{"region", "endpoint", "use_path_style", "disable_https", "prefix", "anonymous", "profile"}

// OpenBucket opens an s3:// bucket URL. The host is the bucket name;
// query parameters configure the client:
//
//   - region: the bucket's region, e.g. us-east-1 (any value for most
//     S3-compatible servers); default: asked of the server
//   - endpoint: base URL of an S3-compatible server, e.g.
//     http://127.0.0.1:9000; default: AWS
//   - use_path_style=true: address the bucket in the path rather than the
//     host name, as local servers need; default: in the host name on
//     AWS, in the path elsewhere
//   - disable_https=true: talk plain HTTP to the endpoint (an endpoint
//     given as http:// does anyway)
//   - prefix: a key prefix within the bucket, e.g. prefix=switchyard/
//   - anonymous=true: send unsigned requests
//   - profile: the profile of the AWS shared files to take credentials
//     from; default: $AWS_PROFILE, else "default"
//
// Any other parameter is refused. Credentials come from the usual AWS
// sources, in this order: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
// (and AWS_SESSION_TOKEN); the shared files (~/.aws/credentials and
// ~/.aws/config, with credential_process and SSO profiles); a web
// identity token (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN), the
// container's role (ECS, EKS Pod Identity) or the instance's role. Example
// for a local MinIO:
//
//	s3://files?region=us-east-1&endpoint=http://127.0.0.1:9000&use_path_style=true&disable_https=true
func OpenBucket(ctx context.Context, rawURL string) (*Bucket, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// The URL may carry credentials in its query; url.Parse's error
		// quotes it whole.
		return nil, errors.New("blob: parsing bucket URL: not a URL")
	}
	if u.Scheme != "s3" {
		return nil, fmt.Errorf("blob: bucket URL scheme %q: want s3://", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("blob: bucket URL names no bucket: want s3://BUCKET?...")
	}
	q := u.Query()
	for name := range q {
		if !contains(bucketParams, name) {
			return nil, fmt.Errorf("blob: bucket URL parameter %q: want one of %s", name, strings.Join(bucketParams, ", "))
		}
	}
	flag := func(name string) (bool, error) {
		v := q.Get(name)
		if v == "" {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("blob: bucket URL parameter %s=%q: want true or false", name, v)
		}
		return b, nil
	}
	pathStyle, err := flag("use_path_style")
	if err != nil {
		return nil, err
	}
	noHTTPS, err := flag("disable_https")
	if err != nil {
		return nil, err
	}
	anonymous, err := flag("anonymous")
	if err != nil {
		return nil, err
	}

	host, secure := "s3.amazonaws.com", !noHTTPS
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || eu.Host == "" || (eu.Scheme != "http" && eu.Scheme != "https") ||
			strings.Trim(eu.Path, "/") != "" || eu.RawQuery != "" || eu.User != nil {
			// Not quoted: an endpoint may carry credentials.
			return nil, errors.New("blob: bucket URL parameter endpoint: want http(s)://HOST[:PORT], without credentials or a path")
		}
		host, secure = eu.Host, eu.Scheme == "https" && !noHTTPS
	}
	lookup := minio.BucketLookupAuto
	if q.Has("use_path_style") {
		lookup = minio.BucketLookupDNS
		if pathStyle {
			lookup = minio.BucketLookupPath
		}
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{Profile: q.Get("profile")},
		&credentials.IAM{},
	})
	if anonymous {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("blob: opening bucket %s: %w", u.Host, err)
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       q.Get("region"),
		BucketLookup: lookup,
		Transport:    transport,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: opening bucket %s: %w", u.Host, err)
	}
	calls := s3Calls{
		put: client.PutObject,
		// Core's GetObject, without the read-ahead of the client's.
		get:    minio.Core{Client: client}.GetObject,
		remove: client.RemoveObject,
	}
	return &Bucket{calls: calls, transport: transport, bucket: u.Host, prefix: q.Get("prefix")}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Put implements Store.
func (s *Bucket) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := ValidKey(key); err != nil {
		return 0, err
	}
	r = ctxReader{ctx, r}
	opts := minio.PutObjectOptions{
		// The bytes are served with the type stored in the metadata
		// store; a fixed type keeps the client from guessing one.
		ContentType: "application/octet-stream",
		PartSize:    partSize,
	}
	head, err := io.ReadAll(io.LimitReader(r, partSize))
	if err != nil {
		return int64(len(head)), fmt.Errorf("blob: writing %s: %w", key, err)
	}
	var info minio.UploadInfo
	if len(head) < partSize {
		// All of it is at hand: one PUT, which is all or nothing.
		info, err = s.calls.put(ctx, s.bucket, s.prefix+key, bytes.NewReader(head), int64(len(head)), opts)
	} else {
		// Of unknown length: a multipart upload, completed only once the
		// reader has ended, aborted by minio-go on any failure.
		info, err = s.calls.put(ctx, s.bucket, s.prefix+key, io.MultiReader(bytes.NewReader(head), r), -1, opts)
	}
	if err != nil {
		return info.Size, fmt.Errorf("blob: writing %s: %w", key, err)
	}
	return info.Size, nil
}

// Open implements Store. It starts reading the blob; after a Seek, the
// next read fetches from the new offset with a ranged GET.
func (s *Bucket) Open(ctx context.Context, key string) (Object, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	body, info, _, err := s.calls.get(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if notFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("blob: opening %s: %w", key, err)
	}
	return &bucketObject{ctx: ctx, s: s, key: key, etag: info.ETag, size: info.Size, body: body}, nil
}

func notFound(err error) bool {
	if err == nil {
		return false
	}
	resp := minio.ToErrorResponse(err)
	return resp.Code == minio.NoSuchKey || resp.StatusCode == http.StatusNotFound && resp.Code != minio.NoSuchBucket
}

// Delete implements Store.
func (s *Bucket) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	err := s.calls.remove(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err != nil && !notFound(err) {
		return fmt.Errorf("blob: deleting %s: %w", key, err)
	}
	return nil
}

// Close implements Store.
func (s *Bucket) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}

// bucketObject is an open blob of a Bucket.
type bucketObject struct {
	ctx  context.Context
	s    *Bucket
	key  string
	etag string // of the version opened: later ranges must read the same
	size int64
	off  int64         // where the next Read reads
	body io.ReadCloser // a response positioned at off, or nil
}

func (o *bucketObject) Size() int64 { return o.size }

func (o *bucketObject) Read(p []byte) (int, error) {
	if o.off >= o.size {
		return 0, io.EOF
	}
	if o.body == nil {
		var opts minio.GetObjectOptions
		if o.off > 0 {
			// From off to the end. (SetRange(0, 0) would ask for the
			// first byte only.)
			if err := opts.SetRange(o.off, 0); err != nil {
				return 0, err
			}
		}
		if o.etag != "" {
			// A blob replaced since Open fails the read (412) rather
			// than mixing two versions' bytes.
			if err := opts.SetMatchETag(o.etag); err != nil {
				return 0, err
			}
		}
		body, _, _, err := o.s.calls.get(o.ctx, o.s.bucket, o.s.prefix+o.key, opts)
		if err != nil {
			return 0, fmt.Errorf("blob: reading %s at %d: %w", o.key, o.off, err)
		}
		o.body = body
	}
	n, err := o.body.Read(p)
	o.off += int64(n)
	if errors.Is(err, io.EOF) && o.off < o.size {
		err = fmt.Errorf("blob: reading %s: %w at %d of %d bytes", o.key, io.ErrUnexpectedEOF, o.off, o.size)
	}
	return n, err
}

// Seek moves the offset of the next Read; it fetches nothing. Seeking
// past the end is allowed, as on a file, and reads then return io.EOF.
func (o *bucketObject) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.off + offset
	case io.SeekEnd:
		abs = o.size + offset
	default:
		return o.off, fmt.Errorf("blob: seek whence %d", whence)
	}
	if abs < 0 {
		return o.off, fmt.Errorf("blob: seek to %d, before the start", abs)
	}
	if abs != o.off && o.body != nil {
		o.body.Close()
		o.body = nil
	}
	o.off = abs
	return abs, nil
}

func (o *bucketObject) Close() error {
	if o.body == nil {
		return nil
	}
	err := o.body.Close()
	o.body = nil
	return err
}

var (
	_ Store  = (*Bucket)(nil)
	_ Object = (*bucketObject)(nil)
)
