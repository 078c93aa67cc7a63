package tools

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestImage(t *testing.T) {
	data := []byte("\x89PNG\r\n\x1a\n\x00\x01\x02")
	b64 := base64.StdEncoding.EncodeToString(data)
	for _, tt := range []struct {
		name string
		img  Image
	}{
		{name: "inline, from its base64", img: InlineImage("image/png", b64)},
		{name: "uploaded, from its bytes", img: ImageOf("image/png", data)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.img.Base64() != b64 || tt.img.MIME != "image/png" {
				t.Errorf("base64 %q, MIME %q; want %q, image/png", tt.img.Base64(), tt.img.MIME, b64)
			}
			if got, err := tt.img.Bytes(); err != nil || !bytes.Equal(got, data) {
				t.Errorf("bytes %x, %v; want %x", got, err, data)
			}
		})
	}
	if _, err := InlineImage("image/png", "not base64!").Bytes(); err == nil {
		t.Error("bytes of invalid base64 without an error")
	}
}
