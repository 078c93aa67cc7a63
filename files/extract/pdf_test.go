package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPDFText(t *testing.T) {
	got, truncated := mustExtract(t, mimePDF, textPDF(
		[]string{"Quarterly report", "Revenue grew (a lot)."},
		[]string{"Second page"},
	), 1000)
	want := "Quarterly report\nRevenue grew (a lot).\n\nSecond page"
	if got != want || truncated {
		t.Errorf("got %q, %v; want %q, false", got, truncated, want)
	}
}

func TestPDFWordSpacing(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{
			name:    "TJ kerning wide enough for a space",
			content: "BT /F1 12 Tf 72 720 Td [(Hello) -600 (world) 20 (!)] TJ ET",
			want:    "Hello world!",
		},
		{
			name:    "words placed one by one on a line",
			content: "BT /F1 10 Tf 1 0 0 1 72 720 Tm (one) Tj 1 0 0 1 100 720 Tm (two) Tj ET",
			want:    "one two",
		},
		{
			name:    "consecutive strings run on",
			content: "BT /F1 10 Tf 72 720 Td (Sp) Tj (lit) Tj ET",
			want:    "Split",
		},
		{
			name:    "a new text object lower down starts a line",
			content: "BT /F1 10 Tf 72 720 Td (top) Tj ET BT /F1 10 Tf 72 700 Td (bottom) Tj ET",
			want:    "top\nbottom",
		},
		{
			name:    "quote operators move to the next line",
			content: "BT /F1 10 Tf 12 TL 72 720 Td (a) Tj (b) ' 1 2 (c) \" ET",
			want:    "a\nb\nc",
		},
		{
			name:    "an unknown font decodes as Latin-1",
			content: "BT /F9 10 Tf 72 720 Td (caf\\351) Tj ET",
			want:    "café",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b pdfBuilder
			b.add("<< /Type /Catalog /Pages 2 0 R >>")
			b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
			b.add("<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
			b.add(stream("", tt.content))
			b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 126 /Widths [" +
				strings.Repeat("500 ", 95) + "] >>")
			got, _ := mustExtract(t, mimePDF, b.bytes(1), 1000)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPDFFeatures covers compressed content, inherited resources, a
// ToUnicode CMap, an object stream with a cross-reference stream, and a
// PDF 2.0 header.
func TestPDFFeatures(t *testing.T) {
	cmap := `/CIDInit /ProcSet findresource begin 12 dict begin begincmap
1 begincodespacerange <0000> <FFFF> endcodespacerange
2 beginbfchar <0001> <0048> <0002> <0069> endbfchar
1 beginbfrange <0003> <0004> <0041> endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end`
	var b pdfBuilder
	b.header = "%PDF-2.0\n"
	b.add("<< /Type /Catalog /Pages 2 0 R >>")
	b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /Font << /F1 5 0 R >> >> >>")
	b.add("<< /Type /Page /Parent 2 0 R /Contents [4 0 R 7 0 R] >>")
	b.add(stream("/Filter /FlateDecode", flate("BT /F1 10 Tf 72 720 Td <00010002> Tj ET")))
	b.add("<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /ToUnicode 6 0 R >>")
	b.add(stream("", cmap))
	b.add(stream("", "BT /F1 10 Tf 72 700 Td <00030004> Tj ET"))
	data := b.bytesObjStm(1, []int{2, 3, 5}, "", "")
	got, _ := mustExtract(t, mimePDF, data, 1000)
	if want := "Hi\nAB"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPDFTruncation(t *testing.T) {
	var pages [][]string
	for i := range 50 {
		pages = append(pages, []string{fmt.Sprintf("Page %d says something rather long.", i+1)})
	}
	got, truncated := mustExtract(t, mimePDF, textPDF(pages...), 100)
	if !truncated || len([]rune(got)) > 100 || !strings.HasPrefix(got, "Page 1 says") {
		t.Errorf("got %q (%d runes), truncated %v", got, len([]rune(got)), truncated)
	}
}

func TestPDFEmptyPagesGiveNoText(t *testing.T) {
	var b pdfBuilder
	b.add("<< /Type /Catalog /Pages 2 0 R >>")
	b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	b.add("<< /Type /Page /Parent 2 0 R >>")
	got, truncated := mustExtract(t, mimePDF, b.bytes(1), 100)
	if got != "" || truncated {
		t.Errorf("got %q, %v", got, truncated)
	}
}

// TestPDFUnreadablePage: a page whose content cannot be read is marked,
// and the pages after it are still read.
func TestPDFUnreadablePage(t *testing.T) {
	tests := []struct {
		name    string
		content string // the first page's content stream
	}{
		{name: "unsupported filter", content: stream("/Filter /LZWDecode", "whatever")},
		{name: "ends inside a hex string", content: stream("", "BT 72 720 Td (never shown) Tj ET <4142 43")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b pdfBuilder
			b.add("<< /Type /Catalog /Pages 2 0 R >>")
			b.add("<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>")
			b.add("<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>")
			b.add(tt.content)
			b.add("<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>")
			b.add(stream("", "BT 72 720 Td <6f6b> Tj ET"))
			got, _ := mustExtract(t, mimePDF, b.bytes(1), 100)
			if want := "[Page 1 could not be read.]\n\nok"; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestPDFHostile feeds files that make the parser, unchecked, allocate
// without bound, loop for ever or panic.
func TestPDFHostile(t *testing.T) {
	page := func(b *pdfBuilder) {
		b.add("<< /Type /Catalog /Pages 2 0 R >>")
		b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
		b.add("<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
		b.add(stream("", "BT /F1 10 Tf 72 720 Td (text) Tj ET"))
		b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	}
	classic := func(edit func(string) string) []byte {
		var b pdfBuilder
		page(&b)
		return []byte(edit(string(b.bytes(1))))
	}
	objStm := func(stmDict, xrefDict string) []byte {
		var b pdfBuilder
		page(&b)
		return b.bytesObjStm(1, []int{2, 5}, stmDict, xrefDict)
	}
	tests := []struct {
		name string
		data []byte
		want error
		why  string
	}{
		{
			name: "huge object number in the xref table",
			data: classic(func(s string) string { return strings.Replace(s, "xref\n0 6", "xref\n900000000 6", 1) }),
			want: ErrLimit,
			why:  "names object 900000006",
		},
		{
			name: "huge trailer Size",
			data: classic(func(s string) string { return strings.Replace(s, "/Size 6", "/Size 4000000000", 1) }),
			want: ErrLimit,
			why:  "trailer Size",
		},
		{
			name: "Prev pointing at itself",
			data: classic(func(s string) string {
				at := s[strings.LastIndex(s, "startxref\n")+len("startxref\n"):]
				at = at[:strings.IndexByte(at, '\n')]
				return strings.Replace(s, "/Size 6", "/Size 6 /Prev "+at, 1)
			}),
			want: ErrMalformed,
			why:  "form a loop",
		},
		{
			name: "object stream claiming a huge count",
			data: objStm("/N 9000000000000", ""),
			want: ErrLimit,
			why:  "9000000000000 objects",
		},
		{
			name: "object stream count given by reference",
			data: objStm("/N 1 0 R", ""),
			want: ErrMalformed,
			why:  "count is not a number",
		},
		{
			name: "object stream extending itself",
			data: objStm("/Extends 6 0 R", ""),
			want: ErrMalformed,
			why:  "extend each other",
		},
		{
			name: "xref stream entries of no bytes",
			data: objStm("", "/W [0 0 0]"),
			want: ErrMalformed,
			why:  "zero bytes",
		},
		{
			name: "xref stream with a huge predictor row",
			data: objStm("", "/DecodeParms << /Predictor 12 /Columns 4000000000 >>"),
			want: ErrLimit,
			why:  "predictor Columns",
		},
		{
			// The catalog's offset points into another object: the
			// parser panics while resolving it.
			name: "library panic on a wrong offset",
			data: classic(func(s string) string {
				return strings.Replace(s, "0000000009 00000 n", "0000000030 00000 n", 1)
			}),
			want: ErrMalformed,
			why:  "parser failure",
		},
		{
			name: "object stream ending inside a hex string",
			data: func() []byte {
				var b pdfBuilder
				page(&b)
				b.set(5, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> <414")
				return b.bytesObjStm(1, []int{2, 5}, "", "")
			}(),
			want: ErrMalformed,
			why:  "hexadecimal string",
		},
		{
			name: "object stream stored in an object stream",
			data: func() []byte {
				data := objStm("", "")
				// Object 6, the object stream, becomes entry 0 of itself.
				at := bytes.LastIndex(data, []byte(">>\nstream\n")) + len(">>\nstream\n") + 6*7
				copy(data[at:], []byte{2, 0, 0, 0, 6, 0, 0})
				return data
			}(),
			want: ErrMalformed,
			why:  "stored in an object stream",
		},
		{name: "not a PDF at all", data: []byte("%PDF-1.4\nnothing else"), want: ErrMalformed, why: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			_, _, err := Text(ctx, mimePDF, bytes.NewReader(tt.data), int64(len(tt.data)), 1000)
			if !errors.Is(err, tt.want) || !strings.Contains(fmt.Sprint(err), tt.why) {
				t.Errorf("error = %v, want %v saying %q", err, tt.want, tt.why)
			}
		})
	}
}

func TestPDFHostileCMapFallsBackToLatin1(t *testing.T) {
	var b pdfBuilder
	b.add("<< /Type /Catalog /Pages 2 0 R >>")
	b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	b.add("<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
	b.add(stream("", "BT /F1 10 Tf 72 720 Td (ok) Tj ET"))
	b.add("<< /Type /Font /Subtype /Type1 /BaseFont /X /ToUnicode 6 0 R >>")
	// Each end of a block would append as many entries as the count says.
	b.add(stream("", "60000 beginbfchar endbfchar"+strings.Repeat(" endbfchar", 1000)))
	got, _ := mustExtract(t, mimePDF, b.bytes(1), 100)
	if got != "ok" {
		t.Errorf("got %q, want %q", got, "ok")
	}
}

func TestPDFCyclicPageTree(t *testing.T) {
	var b pdfBuilder
	b.add("<< /Type /Catalog /Pages 2 0 R >>")
	b.add("<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
	_, _, err := extract(t, mimePDF, b.bytes(1), 100)
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("error = %v, want ErrMalformed", err)
	}
}

func TestGuardTurnsPanicsIntoErrors(t *testing.T) {
	err := guard(func() error { panic("index out of range") })
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("error = %v", err)
	}
	err = guard(func() error { var m map[string]int; m["x"] = 1; return nil })
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("runtime error = %v", err)
	}
	err = guard(func() error { panic(pdfStop{context.Canceled}) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("stop = %v", err)
	}
}

// TestPDFWaitEndsWithContext checks that Text returns when its context
// ends even if the parser does not: a reader that blocks stands in for
// a parser call that never returns.
func TestPDFWaitEndsWithContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	r := blockingReader{release: release}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := Text(ctx, mimePDF, r, 1000, 100)
		done <- err
	}()
	<-r.started()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

// blockingReader blocks every read until release is closed.
type blockingReader struct {
	release chan struct{}
}

var readStarted = make(chan struct{}, 1)

func (blockingReader) started() <-chan struct{} { return readStarted }

func (b blockingReader) ReadAt(p []byte, off int64) (int, error) {
	select {
	case readStarted <- struct{}{}:
	default:
	}
	<-b.release
	return 0, errors.New("released")
}
