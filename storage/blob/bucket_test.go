package blob_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

	gcblob "gocloud.dev/blob"

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

// listBucket lists every object in the bucket through a second client,
// so that the store under test is not trusted to report on itself.
func listBucket(t *testing.T, u string) []string {
	t.Helper()
	ctx := context.Background()
	b, err := gcblob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var keys []string
	it := b.List(nil)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, obj.Key)
	}
	slices.Sort(keys)
	return keys
}

func TestOpenBucketRejectsOtherSchemes(t *testing.T) {
	for _, u := range []string{"file:///tmp/x", "mem://", "gs://bucket", "://"} {
		if _, err := blob.OpenBucket(context.Background(), u); err == nil {
			t.Errorf("OpenBucket(%q) succeeded", u)
		}
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
