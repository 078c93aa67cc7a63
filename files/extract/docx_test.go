package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/officetest"
)

func TestDOCXText(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "paragraphs as lines",
			body: officetest.Para("First paragraph.") + officetest.Para("") + officetest.Para("") + officetest.Para("Second &amp; last."),
			want: "First paragraph.\n\nSecond & last.",
		},
		{
			name: "runs, tabs and breaks",
			body: `<w:p><w:r><w:t>Name:</w:t></w:r><w:r><w:tab/><w:t>Ada</w:t><w:br/><w:t>Lovelace</w:t></w:r></w:p>`,
			want: "Name:\tAda\nLovelace",
		},
		{
			name: "tab stops in properties are not tabs",
			body: `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>x</w:t></w:r></w:p>`,
			want: "x",
		},
		{
			name: "table rows as tab-separated cells",
			body: officetest.Para("Before") + `<w:tbl><w:tblPr/><w:tr>` +
				`<w:tc><w:p><w:r><w:t>Item</w:t></w:r></w:p></w:tc>` +
				`<w:tc><w:p><w:r><w:t>Price</w:t></w:r></w:p></w:tc></w:tr><w:tr>` +
				`<w:tc>` + officetest.Para("Tea") + officetest.Para("(green)") + `</w:tc>` +
				`<w:tc><w:p><w:r><w:t>3</w:t><w:tab/><w:t>EUR</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` + officetest.Para("After"),
			want: "Before\nItem\tPrice\nTea (green)\t3 EUR\n\nAfter",
		},
		{
			name: "nested table flattened into its cell",
			body: `<w:tbl><w:tr><w:tc><w:tbl><w:tr><w:tc>` + officetest.Para("a") + `</w:tc><w:tc>` + officetest.Para("b") + `</w:tc></w:tr></w:tbl></w:tc>` +
				`<w:tc>` + officetest.Para("c") + `</w:tc></w:tr></w:tbl>`,
			want: "a b\tc",
		},
		{
			name: "tracked deletions and field codes left out",
			body: `<w:p><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:ins><w:r><w:t>kept</w:t></w:r></w:ins>` +
				`<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r>` +
				`<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>7</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`,
			want: "kept7",
		},
		{
			name: "text boxes once, without their fallback copy",
			body: `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:txbxContent>` + officetest.Para("boxed") +
				`</w:txbxContent></mc:Choice><mc:Fallback><w:txbxContent>` + officetest.Para("boxed") +
				`</w:txbxContent></mc:Fallback></mc:AlternateContent></w:r></w:p>`,
			want: "boxed",
		},
		{
			name: "hyphens",
			body: `<w:p><w:r><w:t>e</w:t><w:noBreakHyphen/><w:t>mail</w:t><w:softHyphen/><w:t>s</w:t></w:r></w:p>`,
			want: "e-mails",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := mustExtract(t, mimeDOCX, officetest.Docx(t, tt.body), 1000)
			if got != tt.want || truncated {
				t.Errorf("got %q, %v; want %q, false", got, truncated, tt.want)
			}
		})
	}
}

func TestDOCXTruncation(t *testing.T) {
	body := strings.Repeat(officetest.Para("Lorem ipsum dolor sit amet."), 1000)
	got, truncated := mustExtract(t, mimeDOCX, officetest.Docx(t, body), 50)
	if !truncated || len([]rune(got)) > 50 || !strings.HasPrefix(got, "Lorem ipsum dolor sit amet.\nLorem") {
		t.Errorf("got %q, truncated %v", got, truncated)
	}
}

func TestDOCXStrictNamespaceAndMainPart(t *testing.T) {
	// ISO strict documents use another namespace; some writers name the
	// main part differently.
	doc := officetest.Zip(t,
		[2]string{"[Content_Types].xml", `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Override PartName="/word/main.xml" ContentType="` + docxMainType + `"/></Types>`},
		[2]string{"word/main.xml", `<w:document xmlns:w="http://purl.oclc.org/ooxml/wordprocessingml/main"><w:body>` +
			officetest.Para("strict") + `</w:body></w:document>`},
	)
	got, _ := mustExtract(t, mimeDOCX, doc, 100)
	if got != "strict" {
		t.Errorf("got %q", got)
	}
}

func TestDOCXRefused(t *testing.T) {
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want error
	}{
		{
			// 8 MiB of zeros deflate to about 8 KiB: a ratio of 1000.
			name: "zip bomb",
			data: func(t *testing.T) []byte {
				return officetest.Zip(t,
					[2]string{"[Content_Types].xml", `<Types><Override PartName="/word/document.xml" ContentType="` + docxMainType + `"/></Types>`},
					[2]string{"word/document.xml", "<w:document>" + string(make([]byte, 8<<20))},
				)
			},
			want: ErrLimit,
		},
		{
			name: "directory with too many entries",
			data: func(t *testing.T) []byte {
				var buf bytes.Buffer
				zw := zip.NewWriter(&buf)
				for range 20_001 { // one over the limit of zipdir.Check
					if _, err := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Store}); err != nil {
						t.Fatal(err)
					}
				}
				zw.Close()
				return buf.Bytes()
			},
			want: ErrLimit,
		},
		{
			name: "oversized content types",
			data: func(t *testing.T) []byte {
				return officetest.Zip(t, [2]string{"[Content_Types].xml", "<Types>" + strings.Repeat("<!-- padding -->", maxMetaPartBytes/16+1) + "</Types>"})
			},
			want: ErrLimit,
		},
		{name: "not a zip", data: func(*testing.T) []byte { return []byte("plain text") }, want: ErrMalformed},
		{
			name: "no main part",
			data: func(t *testing.T) []byte { return officetest.Zip(t, [2]string{"[Content_Types].xml", "<Types/>"}) },
			want: ErrMalformed,
		},
		{
			name: "broken XML",
			data: func(t *testing.T) []byte {
				return officetest.Docx(t, `<w:p><w:r w:x=unquoted><w:t>text</w:t></w:r></w:p>`)
			},
			want: ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := extract(t, mimeDOCX, tt.data(t), 1000)
			if !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestPartReadLimit checks that a part is read only up to its limit and
// the text so far is kept as truncated.
func TestPartReadLimit(t *testing.T) {
	data := officetest.Docx(t, strings.Repeat(officetest.Para("row"), 100))
	pkg, err := openPackage("docx", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := pkg.open("word/document.xml", 600)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := newOutput(10_000, true)
	w := docxWriter{out: out}
	if err := w.run(t.Context(), xml.NewDecoder(rc)); err != nil {
		t.Fatal(err)
	}
	got, truncated := out.result()
	if n := strings.Count(got, "row"); !truncated || n == 0 || n >= 100 {
		t.Errorf("got %d rows, truncated %v", n, truncated)
	}
	if pkg.inflated > 600 {
		t.Errorf("inflated %d bytes, limit 600", pkg.inflated)
	}
}
