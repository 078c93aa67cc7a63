package files_test

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/switchyardhq/switchyard/internal/officetest"
)

// Fixtures are built in code, so the repository holds no binaries and
// each one shows what makes it what it is.

func testImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	return img
}

func pngBytes(t testing.TB) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpBytes is the header of a lossy WebP: RIFF size WEBP then a VP8 chunk.
func webpBytes() []byte {
	b := []byte("RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00")
	return append(b, bytes.Repeat([]byte{0x30}, 24)...)
}

// ftyp builds an ISO base media file start: an ftyp box with the given
// brands, then an empty mdat box.
func ftyp(major string, compat ...string) []byte {
	size := 16 + 4*len(compat)
	b := []byte{0, 0, 0, byte(size)}
	b = append(b, "ftyp"+major+"\x00\x00\x02\x00"...)
	for _, c := range compat {
		b = append(b, c...)
	}
	return append(b, "\x00\x00\x00\x08mdat"...)
}

// ebml builds a Matroska-family header with the given DocType.
func ebml(docType string) []byte {
	inner := []byte{0x42, 0x86, 0x81, 0x01} // EBMLVersion 1
	inner = append(inner, 0x42, 0x82, 0x80|byte(len(docType)))
	inner = append(inner, docType...)
	b := []byte{0x1A, 0x45, 0xDF, 0xA3, 0x80 | byte(len(inner))}
	b = append(b, inner...)
	return append(b, 0x18, 0x53, 0x80, 0x67, 0x80) // Segment, size 0
}

func pdfBytes() []byte {
	return []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
}

func contentTypesXML(partName, contentType string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="` + partName + `" ContentType="` + contentType + `"/>
</Types>`
}

func docxBytes(t testing.TB) []byte {
	return officetest.Zip(t,
		[2]string{"[Content_Types].xml", contentTypesXML("/word/document.xml",
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml")},
		[2]string{"_rels/.rels", "<Relationships/>"},
		[2]string{"word/document.xml", "<w:document/>"},
	)
}

// xlsxBytes is a real workbook written by excelize.
func xlsxBytes(t testing.TB) []byte {
	f := excelize.NewFile()
	defer f.Close()
	f.SetCellValue("Sheet1", "A1", "total")
	f.SetCellValue("Sheet1", "B1", 42)
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// eicar returns the EICAR anti-malware test file, assembled at run time
// so that the source is not itself a match for scanners.
func eicar() []byte {
	return []byte(`X5O!P%@AP[4\PZX54(P^)7CC)7}$` + `EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`)
}
