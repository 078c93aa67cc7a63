package blob_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/switchyardhq/switchyard/storage/blob"
	"github.com/switchyardhq/switchyard/storage/blob/blobtest"
)

func TestBucketContract(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blobtest.Fixture {
		u := blobtest.FakeS3(t)
		b, err := blob.OpenBucket(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return blobtest.Fixture{Store: b, Contents: func(t *testing.T) []string { return listBucket(t, u) }}
	})
}

// listBucket lists every object in the bucket, and every multipart upload
// begun and neither completed nor aborted (as "KEY (incomplete upload)"),
// with plain HTTP requests of its own, so that neither the store under
// test nor its client library is trusted to report on itself.
func listBucket(t *testing.T, bucketURL string) []string {
	t.Helper()
	u, err := url.Parse(bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	base := u.Query().Get("endpoint") + "/" + u.Host + "/"
	get := func(query string, into any) {
		resp, err := http.Get(base + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		// gofakes3 answers NoSuchUpload for the uploads of a bucket
		// that never had one.
		if query == "uploads" && resp.StatusCode == http.StatusNotFound && bytes.Contains(body, []byte("<Code>NoSuchUpload</Code>")) {
			return
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET ?%s: %s: %s", query, resp.Status, body)
		}
		if err := xml.Unmarshal(body, into); err != nil {
			t.Fatalf("GET ?%s: %v", query, err)
		}
	}
	var objects struct {
		Contents    []struct{ Key string }
		IsTruncated bool
	}
	get("list-type=2", &objects)
	var uploads struct {
		Upload      []struct{ Key string }
		IsTruncated bool
	}
	get("uploads", &uploads)
	if objects.IsTruncated || uploads.IsTruncated {
		t.Fatal("listing truncated: more objects than the suite writes")
	}
	var keys []string
	for _, o := range objects.Contents {
		keys = append(keys, o.Key)
	}
	for _, up := range uploads.Upload {
		keys = append(keys, up.Key+" (incomplete upload)")
	}
	slices.Sort(keys)
	return keys
}

func TestOpenBucketRefusesBadURLs(t *testing.T) {
	for _, u := range []string{
		"file:///tmp/x", "mem://", "gs://bucket", "://", "s3://", "s3:///key",
		"s3://files?ssetype=AES256",                           // a parameter it does not know
		"s3://files?use_path_style=yes please",                // not a boolean
		"s3://files?endpoint=127.0.0.1:9000",                  // no scheme
		"s3://files?endpoint=ftp://127.0.0.1:9000",            // not HTTP
		"s3://files?endpoint=http://127.0.0.1:9000/some/path", // a path minio-go cannot address
	} {
		if b, err := blob.OpenBucket(context.Background(), u); err == nil {
			b.Close()
			t.Errorf("OpenBucket(%q) succeeded", u)
		}
	}
}

// A bucket URL may hold secrets; errors about it do not repeat them.
func TestOpenBucketErrorsKeepSecrets(t *testing.T) {
	for _, u := range []string{
		"s3://files?endpoint=http://AKIA:SECRET@127.0.0.1:9000", // credentials in the endpoint
		"s3://files?profile=x&token=SECRET\x01",                 // not a URL at all
	} {
		_, err := blob.OpenBucket(context.Background(), u)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("OpenBucket(%q): error = %v", u, err)
		}
	}
}

// prefix= puts every key under the prefix, and a Bucket with another
// prefix does not see it.
func TestBucketPrefix(t *testing.T) {
	ctx := context.Background()
	u := blobtest.FakeS3(t)
	open := func(prefix string) *blob.Bucket {
		b, err := blob.OpenBucket(ctx, u+"&prefix="+url.QueryEscape(prefix))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	a, other := open("tenant-a/"), open("tenant-b/")
	if _, err := a.Put(ctx, "files/x", strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	if got := listBucket(t, u); !slices.Equal(got, []string{"tenant-a/files/x"}) {
		t.Fatalf("bucket holds %q", got)
	}
	if _, err := other.Open(ctx, "files/x"); err != blob.ErrNotFound {
		t.Fatalf("the other prefix opens files/x: %v", err)
	}
	o, err := a.Open(ctx, "files/x")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if b, _ := io.ReadAll(o); string(b) != "hello" {
		t.Fatalf("read %q", b)
	}
}

// A blob replaced while it is being read fails the read after a seek
// rather than mixing bytes of both versions: later ranges are asked for
// with If-Match, which S3 answers 412 when the blob changed. gofakes3
// ignores If-Match on GET, so the test server checks it as S3 does.
func TestBucketReadAfterReplaceFails(t *testing.T) {
	ctx := context.Background()
	backend := s3mem.New()
	if err := backend.CreateBucket("files"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(backend).Server()
	var ifMatch []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := r.Header.Get("If-Match"); r.Method == http.MethodGet && m != "" {
			ifMatch = append(ifMatch, m)
			head := httptest.NewRecorder()
			fake.ServeHTTP(head, httptest.NewRequest(http.MethodHead, r.URL.String(), nil))
			if head.Header().Get("ETag") != m {
				w.WriteHeader(http.StatusPreconditionFailed)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`)
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	b, err := blob.OpenBucket(ctx, "s3://files?anonymous=true&use_path_style=true&region=us-east-1&endpoint="+url.QueryEscape(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Put(ctx, "k", bytes.NewReader(bytes.Repeat([]byte("a"), 10_000))); err != nil {
		t.Fatal(err)
	}

	o, err := b.Open(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Seek(5000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(o); err != nil || string(got) != strings.Repeat("a", 5000) {
		t.Fatalf("read %d bytes, %v, before any change", len(got), err)
	}

	if _, err := b.Put(ctx, "k", bytes.NewReader(bytes.Repeat([]byte("b"), 10_000))); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(o)
	if err == nil || strings.Contains(string(got), "b") {
		t.Fatalf("read %d bytes of the replaced blob, error %v", len(got), err)
	}
	if len(ifMatch) != 2 {
		t.Fatalf("%d ranged reads asked with If-Match, want 2", len(ifMatch))
	}
}

func ExampleOpenBucket() {
	b, err := blob.OpenBucket(context.Background(),
		"s3://files?region=us-east-1&endpoint=http://127.0.0.1:9000&use_path_style=true&disable_https=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
}
