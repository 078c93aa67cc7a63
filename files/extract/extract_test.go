package extract

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/officetest"
)

// extract runs Text on b.
func extract(t testing.TB, mime string, b []byte, maxChars int) (string, bool, error) {
	t.Helper()
	return Text(t.Context(), mime, bytes.NewReader(b), int64(len(b)), maxChars)
}

func mustExtract(t testing.TB, mime string, b []byte, maxChars int) (string, bool) {
	t.Helper()
	text, truncated, err := extract(t, mime, b, maxChars)
	if err != nil {
		t.Fatalf("Text(%s): %v", mime, err)
	}
	return text, truncated
}

func TestPlainText(t *testing.T) {
	tests := []struct {
		name      string
		mime      string
		in        string
		max       int
		want      string
		truncated bool
	}{
		{name: "txt as is", mime: "text/plain; charset=utf-8", in: "Hello,\n\n\n\nworld.  \n", max: 100, want: "Hello,\n\n\n\nworld.  \n"},
		{name: "csv keeps CRLF", mime: "text/csv; charset=utf-8", in: "a,b\r\n1,2\r\n", max: 100, want: "a,b\r\n1,2\r\n"},
		{name: "md", mime: "text/markdown; charset=utf-8", in: "# Title\n\n- item", max: 100, want: "# Title\n\n- item"},
		{name: "BOM dropped", mime: "text/plain", in: "\uFEFFhi", max: 100, want: "hi"},
		{name: "control characters dropped", mime: "text/plain", in: "a\x00b\x1bc\td", max: 100, want: "abc\td"},
		{name: "invalid UTF-8 replaced", mime: "text/plain", in: "a\xffb", max: 100, want: "a\uFFFDb"},
		{name: "cut in runes", mime: "text/plain", in: "héllo wörld", max: 7, want: "héllo w", truncated: true},
		{name: "exact fit is not truncated", mime: "text/plain", in: "héllo", max: 5, want: "héllo"},
		{name: "trailing white space past the end is not more text", mime: "text/plain", in: "héllo \n\n", max: 5, want: "héllo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := mustExtract(t, tt.mime, []byte(tt.in), tt.max)
			if got != tt.want || truncated != tt.truncated {
				t.Errorf("got %q, truncated %v; want %q, %v", got, truncated, tt.want, tt.truncated)
			}
		})
	}
}

func TestTextDefaultMaxChars(t *testing.T) {
	in := strings.Repeat("x", DefaultMaxChars+10)
	got, truncated := mustExtract(t, "text/plain", []byte(in), 0)
	if utf8.RuneCountInString(got) != DefaultMaxChars || !truncated {
		t.Errorf("got %d runes, truncated %v; want %d, true", utf8.RuneCountInString(got), truncated, DefaultMaxChars)
	}
}

func TestTextUnsupported(t *testing.T) {
	for _, mime := range []string{"image/png", "video/mp4", "application/zip", "", "not a type;;"} {
		_, _, err := extract(t, mime, []byte("data"), 100)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("Text(%q) error = %v, want ErrUnsupported", mime, err)
		}
		if HasText(mime) {
			t.Errorf("HasText(%q) = true", mime)
		}
	}
	for _, mime := range []string{mimePDF, mimeDOCX, mimeXLSX, "text/csv; charset=utf-8", "text/plain", "text/markdown"} {
		if !HasText(mime) {
			t.Errorf("HasText(%q) = false", mime)
		}
	}
}

func TestTextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		mime string
		data []byte
	}{
		{name: "txt", mime: "text/plain", data: []byte("hello")},
		{name: "pdf", mime: mimePDF, data: textPDF([]string{"hello"})},
		{name: "docx", mime: mimeDOCX, data: officetest.Docx(t, officetest.Para("hello"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Text(ctx, tc.mime, bytes.NewReader(tc.data), int64(len(tc.data)), 100)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want context.Canceled", err)
			}
		})
	}
}

func TestOutputSqueezesBlankLines(t *testing.T) {
	o := newOutput(100, true)
	for _, s := range []string{"\n\n", "a\n\n\n\n", "b\r\n", "c\rd  \n\n\n"} {
		if err := o.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	got, truncated := o.result()
	if want := "a\n\nb\nc\nd"; got != want || truncated {
		t.Errorf("got %q, %v; want %q, false", got, truncated, want)
	}
}
