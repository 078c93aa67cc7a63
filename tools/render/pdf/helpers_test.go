package pdf

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	lpdf "github.com/ledongthuc/pdf"
)

// renderOK renders d and fails the test on error.
func renderOK(t testing.TB, d Document) Result {
	t.Helper()
	res, err := Render(context.Background(), d)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res
}

// pageTexts reads the text of every page back: the PDF is opened with a
// PDF reader, and the strings of each page's text operators are decoded
// from the UTF-16 that fpdf writes for its Unicode fonts (the reader's own
// text extraction keeps only the low byte of each character). Each text
// operation is one line of the result.
func pageTexts(t testing.TB, data []byte) []string {
	t.Helper()
	rd, err := lpdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("reading pdf: %v", err)
	}
	texts := make([]string, rd.NumPage())
	for i := range texts {
		content, err := io.ReadAll(rd.Page(i + 1).V.Key("Contents").Reader())
		if err != nil {
			t.Fatalf("page %d content: %v", i+1, err)
		}
		var b strings.Builder
		for _, m := range textOp.FindAllSubmatch(content, -1) {
			b.WriteString(utf16BE(unescapePDF(m[1])))
			b.WriteByte('\n')
		}
		texts[i] = b.String()
	}
	return texts
}

var textOp = regexp.MustCompile(`\(((?:\\.|[^\\)])*)\) Tj`)

// unescapePDF resolves the backslash escapes of a PDF literal string.
func unescapePDF(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		default:
			if c >= '0' && c <= '7' {
				v, n := 0, 0
				for ; n < 3 && i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '7'; n++ {
					v = v*8 + int(s[i+n]-'0')
				}
				out = append(out, byte(v))
				i += n - 1
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

func utf16BE(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return string(utf16.Decode(u))
}

// flat joins text read back so that words split across text operations
// still match.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// chartPNG draws a chart-like picture: a white canvas with a light grid,
// axes and coloured bars.
func chartPNG(t testing.TB, w, h int, seed int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill := func(x0, y0, x1, y1 int, c color.RGBA) {
		for y := max(y0, 0); y < min(y1, h); y++ {
			for x := max(x0, 0); x < min(x1, w); x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	fill(0, 0, w, h, color.RGBA{255, 255, 255, 255})
	left, bottom, top := w/10, h-h/8, h/10
	for i := 0; i <= 5; i++ {
		y := bottom - i*(bottom-top)/5
		fill(left, y, w-w/20, y+2, color.RGBA{225, 228, 232, 255})
	}
	palette := []color.RGBA{{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255}}
	bars := 8
	slot := (w - w/20 - left) / bars
	for i := range bars {
		v := 0.25 + 0.7*float64((i*37+seed*53)%100)/100
		x := left + i*slot + slot/5
		y := bottom - int(v*float64(bottom-top))
		fill(x, y, x+slot*3/5, bottom, palette[(i+seed)%len(palette)])
	}
	fill(left, top, left+3, bottom, color.RGBA{60, 60, 60, 255})
	fill(left, bottom, w-w/20, bottom+3, color.RGBA{60, 60, 60, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
