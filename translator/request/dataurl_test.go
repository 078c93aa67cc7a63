package request

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"unsafe"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// decodeWhole is how a data URL's base64 was read before it was kept
// as it came: decoded whole by encoding/base64, unpadded when the length
// says so. The image sent on was its standard encoding.
func decodeWhole(data string) ([]byte, error) {
	enc := base64.StdEncoding
	if !strings.HasSuffix(data, "=") && len(data)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	return enc.DecodeString(data)
}

// randomPNG is n bytes behind a PNG signature.
func randomPNG(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	copy(b, pngBytes)
	return b
}

// checkAgainstWhole holds decodeDataURL to decodeWhole: the same data
// accepted, the same image, its base64 the standard one.
func checkAgainstWhole(t *testing.T, data string) {
	t.Helper()
	img, err := decodeDataURL("data:image/png;base64,"+data, 1<<20)
	want, werr := decodeWhole(data)
	if werr == nil && len(want) > 1<<20 {
		werr = errors.New("too large")
	}
	if werr == nil && !imageTypes[http.DetectContentType(want)] {
		werr = errors.New("not an image")
	}
	if (err == nil) != (werr == nil) {
		t.Fatalf("data %.60q: accepted %v, want %v (%v, %v)", data, err == nil, werr == nil, err, werr)
	}
	if err != nil {
		return
	}
	if got := img.Base64(); got != base64.StdEncoding.EncodeToString(want) {
		t.Fatalf("data %.60q: base64 %.60q, want the standard encoding", data, got)
	}
	if got, err := img.Bytes(); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("data %.60q: bytes differ (%v)", data, err)
	}
	if img.MIME != http.DetectContentType(want) {
		t.Fatalf("data %.60q: MIME %q", data, img.MIME)
	}
}

func TestDataURLForms(t *testing.T) {
	std := base64.StdEncoding.EncodeToString
	big := std(randomPNG(10_000, 1)) // more than one piece of checkStandard
	two := std(randomPNG(41, 2))     // ends in "=="
	one := std(randomPNG(40, 3))     // ends in "="
	tests := []struct {
		name string
		data string
		// kept: the caller's base64 is used as it is, not decoded whole
		// and encoded again.
		kept bool
		code string
	}{
		{name: "standard", data: std(pngBytes), kept: true},
		{name: "standard, several pieces", data: big, kept: true},
		{name: "two padding characters", data: two, kept: true},
		{name: "one padding character", data: one, kept: true},
		{name: "unpadded", data: strings.TrimRight(two, "=")},
		{name: "line breaks", data: big[:76] + "\r\n" + big[76:152] + "\n" + big[152:]},
		{name: "line breaks, in whole quanta", data: big[:76] + "\r\n\r\n" + big[76:]},
		{name: "stray bits after the last byte", data: two[:len(two)-3] + "B=="},
		{name: "padding in the middle", data: one + big, code: CodeInvalidImage},
		{name: "padding in the middle of the last piece", data: big[:4096] + one + std(pngBytes), code: CodeInvalidImage},
		{name: "not the alphabet", data: std(pngBytes)[:8] + "-_" + std(pngBytes)[10:], code: CodeInvalidImage},
		{name: "three padding characters", data: std(pngBytes)[:len(std(pngBytes))-4] + "A===", code: CodeInvalidImage},
		{name: "empty", data: "", code: CodeInvalidImage},
		{name: "not an image", data: std([]byte("GIF8 but not quite an image")), code: CodeInvalidImage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkAgainstWhole(t, tt.data)
			const prefix = "data:image/png;base64,"
			url := prefix + tt.data
			img, err := decodeDataURL(url, 1<<20)
			if tt.code != "" {
				var ae *apierror.Error
				if !errors.As(err, &ae) || ae.Code != tt.code {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Kept: the very bytes of the URL, not an equal copy.
			if kept := unsafe.StringData(img.Base64()) == unsafe.StringData(url[len(prefix):]); kept != tt.kept {
				t.Errorf("kept as it came: %v, want %v", kept, tt.kept)
			}
		})
	}
}

// The decoded size is checked exactly once the base64 is read, also
// when its length alone cannot tell.
func TestDataURLSizeBound(t *testing.T) {
	img := randomPNG(1000, 4)
	for _, tt := range []struct {
		name string
		max  int64
		ok   bool
	}{
		{"at the bound", 1000, true},
		{"a byte over", 999, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeDataURL(dataURL("image/png", img), tt.max)
			var ae *apierror.Error
			if tt.ok && err != nil || !tt.ok && (!errors.As(err, &ae) || ae.Code != CodeImageTooLarge) {
				t.Errorf("err %v", err)
			}
		})
	}
}

func FuzzDataURL(f *testing.F) {
	std := base64.StdEncoding.EncodeToString
	for _, s := range []string{
		std(pngBytes), std(randomPNG(5000, 5)), strings.TrimRight(std(randomPNG(41, 6)), "="),
		std(pngBytes)[:20] + "\n" + std(pngBytes)[20:], std(pngBytes) + "=", "====", "", "iVBORw0KGgo=AAAA",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkAgainstWhole(t, data)
	})
}
