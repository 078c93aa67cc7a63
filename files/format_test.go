package files_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/officetest"
)

func TestDetectFormat(t *testing.T) {
	docx := docxBytes(t)
	tests := []struct {
		name     string
		filename string
		data     []byte
		want     files.Format // zero: refused
	}{
		{"png", "a.png", pngBytes(t), files.FormatPNG},
		{"png upper-case extension", "A.PNG", pngBytes(t), files.FormatPNG},
		{"jpeg as .jpg", "a.jpg", jpegBytes(t), files.FormatJPEG},
		{"jpeg as .jpeg", "a.jpeg", jpegBytes(t), files.FormatJPEG},
		{"gif", "a.gif", gifBytes(t), files.FormatGIF},
		{"webp", "a.webp", webpBytes(), files.FormatWebP},
		{"mp4 isom", "a.mp4", ftyp("isom", "isom", "avc1"), files.FormatMP4},
		{"mp4 by compatible brand", "a.mp4", ftyp("zzzz", "mp42"), files.FormatMP4},
		{"mov qt brand", "a.mov", ftyp("qt  ", "qt  "), files.FormatMOV},
		{"mov holding an mp4 brand", "a.mov", ftyp("isom"), files.FormatMP4},
		{"legacy quicktime", "a.mov", append([]byte("\x00\x00\x00\x10moov"), make([]byte, 8)...), files.FormatMOV},
		{"webm", "a.webm", ebml("webm"), files.FormatWebM},
		{"pdf", "a.pdf", pdfBytes(), files.FormatPDF},
		{"docx", "a.docx", docx, files.FormatDOCX},
		{"xlsx written by excelize", "a.xlsx", xlsxBytes(t), files.FormatXLSX},
		{"csv", "a.csv", []byte("a,b\n1,2\n"), files.FormatCSV},
		{"txt with BOM and accents", "a.txt", []byte("\uFEFFcafé naïve ✓\r\n"), files.FormatTXT},
		{"markdown", "notes.md", []byte("# Title\n\n* item\n"), files.FormatMD},
		{"markdown long extension", "notes.markdown", []byte("# Title\n"), files.FormatMD},
		{"html named .txt is plain text", "page.txt", []byte("<script>alert(1)</script>"), files.FormatTXT},

		{"empty", "a.txt", nil, files.Format{}},
		{"png named .jpg", "a.jpg", pngBytes(t), files.Format{}},
		{"pdf named .txt", "a.txt", pdfBytes(), files.Format{}},
		{"text named .png", "a.png", []byte("not a png"), files.Format{}},
		{"text without extension", "README", []byte("hello"), files.Format{}},
		{"svg", "a.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), files.Format{}},
		{"text with NUL", "a.txt", []byte("ab\x00cd"), files.Format{}},
		{"latin-1 text", "a.txt", []byte("caf\xe9"), files.Format{}},
		{"truncated UTF-8 at the end", "a.txt", []byte("ok \xe2\x9c"), files.Format{}},
		{"ELF binary", "a.txt", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), files.Format{}},
		{"matroska", "a.webm", ebml("matroska"), files.Format{}},
		{"heic image", "a.mp4", ftyp("heic", "mif1", "heic"), files.Format{}},
		{"m4a audio", "a.mp4", ftyp("M4A ", "M4A ", "isom"), files.Format{}},
		{"png without IHDR", "a.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dJUNK1234"), files.Format{}},
		{"webp without VP8 chunk", "a.webp", []byte("RIFF\x24\x00\x00\x00WEBPJUNK\x00\x00\x00\x00"), files.Format{}},
		{"docx named .xlsx", "a.xlsx", docx, files.Format{}},
		{"plain zip", "a.docx", officetest.Zip(t, [2]string{"hello.txt", "hi"}), files.Format{}},
		{"zip named .zip", "a.zip", docx, files.Format{}},
		{"docm", "a.docx", officetest.Zip(t,
			[2]string{"[Content_Types].xml", contentTypesXML("/word/document.xml", "application/vnd.ms-word.document.macroEnabled.main+xml")},
			[2]string{"word/document.xml", "<w:document/>"}), files.Format{}},
		{"docx with macros", "a.docx", officetest.Zip(t,
			[2]string{"[Content_Types].xml", contentTypesXML("/word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml")},
			[2]string{"word/document.xml", "<w:document/>"},
			[2]string{"word/vbaProject.bin", "\x00"}), files.Format{}},
		{"docx main part missing", "a.docx", officetest.Zip(t,
			[2]string{"[Content_Types].xml", contentTypesXML("/word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml")}), files.Format{}},
		{"docx main part outside word/", "a.docx", officetest.Zip(t,
			[2]string{"[Content_Types].xml", contentTypesXML("/other/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml")},
			[2]string{"other/document.xml", "<w:document/>"}), files.Format{}},
		{"zip with data after the end record", "a.docx", append(bytes.Clone(docx), "trailing"...), files.Format{}},
		{"zip with data before it", "a.docx", append([]byte("MZ-stub"), docx...), files.Format{}},
		{"truncated zip", "a.docx", docx[:len(docx)/2], files.Format{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := files.DetectFormat(tc.filename, bytes.NewReader(tc.data), int64(len(tc.data)))
			if tc.want.Name == "" {
				ae := files.Envelope(err)
				if !errors.Is(err, files.ErrInvalidFormat) || ae.Code != "invalid_file_format" || ae.Status != 400 {
					t.Fatalf("DetectFormat = %v, %v; want a 400 invalid_file_format", got.Name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DetectFormat: %v", err)
			}
			if got.Name != tc.want.Name || got.MIME != tc.want.MIME {
				t.Fatalf("DetectFormat = %s (%s), want %s (%s)", got.Name, got.MIME, tc.want.Name, tc.want.MIME)
			}
		})
	}
}

// Streaming in small chunks must judge exactly as reading at once, in
// particular for characters split across chunk boundaries.
func TestSnifferChunkBoundaries(t *testing.T) {
	texts := []string{
		"plain ascii",
		"two-byte é at every offset é é",
		"three-byte ✓ and four-byte 𝄞 characters 𝄞✓",
		"bad continuation \xe2\x28\xa1 here",
		"overlong \xc0\xaf slash",
		"surrogate \xed\xa0\x80 half",
		"cut at the end \xf0\x9d\x84",
	}
	for i, text := range texts {
		whole, wholeErr := files.DetectFormat("a.txt", strings.NewReader(text), int64(len(text)))
		if wantValid := i < 3; (wholeErr == nil) != wantValid {
			t.Fatalf("%q at once: %v, want valid=%v", text, wholeErr, wantValid)
		}
		for chunk := 1; chunk <= 5; chunk++ {
			var s files.Sniffer
			for i := 0; i < len(text); i += chunk {
				s.Write([]byte(text[i:min(i+chunk, len(text))]))
			}
			got, err := s.Judge("a.txt", strings.NewReader(text))
			if got.Name != whole.Name || (err == nil) != (wholeErr == nil) {
				t.Errorf("%q in chunks of %d: %v, %v; at once: %v, %v", text, chunk, got.Name, err, whole.Name, wholeErr)
			}
		}
	}
}

func TestFormatsHaveDistinctNames(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range files.Formats {
		if seen[f.Name] || f.MIME == "" || len(f.Exts) == 0 {
			t.Fatalf("format %+v is a duplicate or incomplete", f)
		}
		seen[f.Name] = true
	}
	if len(seen) != 13 {
		t.Fatalf("%d formats, the spec lists 13", len(seen))
	}
}
