package extract

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/switchyardhq/switchyard/internal/officetest"
)

// fuzzMaxAlloc bounds what one extraction of a small input may allocate:
// far above what real extraction of such inputs takes, far below what an
// unbounded one would.
const fuzzMaxAlloc = 256 << 20

// fuzzText runs Text on arbitrary bytes as mime and checks that it ends
// in time, within its output bound and allocation budget, with one of
// its documented errors.
func fuzzText(t *testing.T, mime string, data []byte) {
	const maxChars = 1000
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	text, _, err := Text(ctx, mime, bytes.NewReader(data), int64(len(data)), maxChars)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > fuzzMaxAlloc {
		t.Errorf("%s: allocated %d bytes for %d bytes of input", mime, n, len(data))
	}
	if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrLimit) {
		t.Errorf("%s: unexpected error %v", mime, err)
	}
	if n := utf8.RuneCountInString(text); n > maxChars {
		t.Errorf("%s: %d characters, more than %d", mime, n, maxChars)
	}
	if !utf8.ValidString(text) {
		t.Errorf("%s: invalid UTF-8", mime)
	}
}

func FuzzOOXML(f *testing.F) {
	f.Add(officetest.Docx(f, officetest.Para("Hello")+`<w:tbl><w:tr><w:tc>`+officetest.Para("a")+`</w:tc></w:tr></w:tbl>`))
	f.Add(handXLSX(f, `<row><c t="s"><v>0</v></c><c s="1"><v>45366</v></c></row>`, `<si><t>x</t></si>`,
		`<cellXfs><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs>`, false))
	f.Add(excelizeXLSX(f, func(x *excelize.File) { x.SetCellValue("Sheet1", "B2", "cell") }))
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzText(t, mimeDOCX, data)
		fuzzText(t, mimeXLSX, data)
	})
}

func FuzzPDF(f *testing.F) {
	f.Add(textPDF([]string{"Hello", "world"}))
	var b pdfBuilder
	b.add("<< /Type /Catalog /Pages 2 0 R >>")
	b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	b.add("<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
	b.add(stream("/Filter /FlateDecode", flate("BT /F1 10 Tf 72 720 Td [(a) -300 (b)] TJ ET")))
	b.add("<< /Type /Font /Subtype /Type0 /Encoding /Identity-H /ToUnicode 6 0 R >>")
	b.add(stream("", "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <61> <0041> endbfchar"))
	f.Add(b.bytesObjStm(1, []int{2, 3}, "", ""))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzText(t, mimePDF, data)
	})
}
