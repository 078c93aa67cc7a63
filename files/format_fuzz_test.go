package files_test

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/files"
)

// FuzzDetectFormat feeds the sniffer arbitrary content under arbitrary
// names. It must never panic, must refuse only with invalid_file_format,
// must accept only what the name's extension allows, and must judge the
// same whether the content arrives at once or in small chunks.
func FuzzDetectFormat(f *testing.F) {
	seeds := [][]byte{
		pngBytes(f), jpegBytes(f), gifBytes(f), webpBytes(), ftyp("isom", "mp42"), ftyp("qt  "),
		ebml("webm"), pdfBytes(), docxBytes(f), xlsxBytes(f), []byte("a,b\n1,2\n"), []byte("héllo ✓"),
	}
	names := []string{"a.png", "a.jpg", "a.gif", "a.webp", "a.mp4", "a.mov", "a.webm", "a.pdf", "a.docx", "a.xlsx", "a.csv", "a.txt"}
	for i, s := range seeds {
		f.Add(s, names[i], uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, name string, chunk uint8) {
		got, err := files.DetectFormat(name, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			ae := files.Envelope(err)
			if !errors.Is(err, files.ErrInvalidFormat) || ae.Code != "invalid_file_format" {
				t.Fatalf("refused with %v, want invalid_file_format", err)
			}
		} else {
			ext := strings.ToLower(path.Ext(name))
			if got.MIME == "" || !slices.Contains(got.Exts, ext) {
				t.Fatalf("accepted %q as %+v", name, got)
			}
		}
		var s files.Sniffer
		step := int(chunk%16) + 1
		for i := 0; i < len(data); i += step {
			s.Write(data[i:min(i+step, len(data))])
		}
		streamed, serr := s.Judge(name, bytes.NewReader(data))
		if streamed.Name != got.Name || (serr == nil) != (err == nil) {
			t.Fatalf("in chunks of %d: %q, %v; at once: %q, %v", step, streamed.Name, serr, got.Name, err)
		}
	})
}
