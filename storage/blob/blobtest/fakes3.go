package blobtest

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// FakeS3 starts an in-process S3 server with one empty bucket, stopped at
// the end of the test, and returns the bucket's s3:// URL for
// blob.OpenBucket (or a gateway in another process on this machine).
func FakeS3(t testing.TB) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("files"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	q := url.Values{
		"region":         {"us-east-1"},
		"endpoint":       {srv.URL},
		"use_path_style": {"true"},
		"disable_https":  {"true"},
		// No credentials on this machine: unsigned requests keep the client
		// from probing the instance-metadata endpoint for some.
		"anonymous": {"true"},
	}
	return "s3://files?" + q.Encode()
}
