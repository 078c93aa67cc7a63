package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

func TestRenderReadsBack(t *testing.T) {
	d := sampleDocs(t)["report"]
	res := renderOK(t, d)
	pages := pageTexts(t, res.PDF)
	if res.Pages != len(pages) || res.Pages < 2 {
		t.Fatalf("Pages = %d, reader finds %d; want the same, at least 2", res.Pages, len(pages))
	}
	all := flat(strings.Join(pages, "\n"))
	for _, want := range []string{
		"Q3 2026 Business Review", "14 October 2026", // title block
		"Executive summary", "Results by region", "Method", "Appendix: definitions", // headings h2-h4
		"Southern Europe", "14,820", "Gross margin", "Expansion postponed", // table cells
		"Enterprise net revenue retention rose to", "monthly plans: 3.1 %", // bullets, nested
		"Extract the invoices of the quarter", "the country of the address decides", // numbered, nested
		"Quarterly revenue by segment, € million", "Net Promoter Score by month", // captions
		"GROUP BY region",                 // code
		"The migration was the smoothest", // quote
		"NRR = R(t) / R(t-4)",             // inline code
	} {
		if !strings.Contains(all, want) {
			t.Errorf("text %q not found in the PDF", want)
		}
	}
	for i, p := range pages {
		foot := fmt.Sprintf("%d / %d", i+1, len(pages))
		if !strings.Contains(p, foot) {
			t.Errorf("page %d lacks footer %q", i+1, foot)
		}
	}
	if !bytes.Contains(res.PDF, []byte("/URI (https://example.com/notes/infra-2026)")) {
		t.Error("the Markdown link is not a clickable URI annotation")
	}
	if !bytes.Contains(res.PDF, []byte("/URI (mailto:finance@example.com)")) {
		t.Error("the mail link is not clickable")
	}
	if !bytes.Contains(res.PDF, []byte("/URI (https://example.com/survey/q3-2026)")) {
		t.Error("the bare URL is not clickable")
	}
	if !bytes.Contains(res.PDF, []byte("/Title (")) {
		t.Error("no title metadata")
	}
	if !bytes.Contains(res.PDF, []byte("/Outlines")) {
		t.Error("the headings are not bookmarked")
	}
	if got, want := res.Embedded, []string{"obj1", "obj2"}; !slices.Equal(got, want) {
		t.Errorf("Embedded = %v, want %v", got, want)
	}
}

func TestEmbeddedOrderAndCaptions(t *testing.T) {
	els := map[string]Image{
		"obj3": {PNG: chartPNG(t, 400, 250, 1), Caption: "Element caption three"},
		"el2":  {PNG: chartPNG(t, 400, 250, 2), Caption: "Element caption two"},
		"obj9": {PNG: chartPNG(t, 400, 250, 3), Caption: "never used"},
	}
	md := "Intro.\n\n![](el2)\n\nText ![Markdown caption](obj3) between.\n\n![again](el2)\n"
	res := renderOK(t, Document{Markdown: md, Elements: els})
	if got, want := res.Embedded, []string{"el2", "obj3"}; !slices.Equal(got, want) {
		t.Errorf("Embedded = %v, want %v", got, want)
	}
	text := flat(strings.Join(pageTexts(t, res.PDF), "\n"))
	for _, want := range []string{"Element caption two", "Markdown caption", "again", "Text", "between."} {
		if !strings.Contains(text, want) {
			t.Errorf("%q not in the PDF", want)
		}
	}
	if strings.Contains(text, "Element caption three") {
		t.Error("the element's caption was used although the Markdown gave one")
	}
	// One image object for el2 although it is shown twice.
	if n := bytes.Count(res.PDF, []byte("/Subtype /Image")); n != 2 {
		t.Errorf("%d image objects, want 2", n)
	}
}

func TestUnknownEmbedIsSourceError(t *testing.T) {
	tests := []struct {
		name     string
		elements map[string]Image
		wants    []string
	}{
		{"others exist", map[string]Image{"obj1": {PNG: chartPNG(t, 40, 30, 1)}, "el4": {PNG: chartPNG(t, 40, 30, 2)}}, []string{"obj7", "el4, obj1"}},
		{"none exist", nil, []string{"obj7", "no chart"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(context.Background(), Document{Markdown: "# Title\n\n![Sales](obj7)\n", Elements: tt.elements})
			rendertest.SourceError(t, err, tt.wants...)
		})
	}
}

func TestURLImagesAreNotFetched(t *testing.T) {
	res := renderOK(t, Document{Markdown: "See ![the logo](https://example.com/logo.png) here.\n"})
	if len(res.Embedded) != 0 {
		t.Errorf("Embedded = %v, want none", res.Embedded)
	}
	if text := flat(pageTexts(t, res.PDF)[0]); !strings.Contains(text, "[image not included: the logo]") {
		t.Errorf("no note for the URL image in %q", text)
	}
	if bytes.Contains(res.PDF, []byte("/Subtype /Image")) {
		t.Error("an image object was written")
	}
}

func TestDeterministic(t *testing.T) {
	d := sampleDocs(t)["report"]
	a := renderOK(t, d).PDF
	for range 3 {
		if b := renderOK(t, d).PDF; !bytes.Equal(a, b) {
			t.Fatal("the same document rendered different bytes")
		}
	}
	d.Created = time.Time{}
	zero := renderOK(t, d).PDF
	if !bytes.Contains(zero, []byte("/CreationDate (D:20000101000000)")) {
		t.Error("a zero Created does not store the fixed date")
	}
	if !bytes.Contains(a, []byte("/CreationDate (D:20261014090000)")) {
		t.Error("Created is not the creation date")
	}
}

func TestPageSize(t *testing.T) {
	tests := []struct {
		name string
		size PageSize
		box  string
	}{
		{"default A4", A4, "/MediaBox [0 0 595.28 841.89]"},
		{"Letter", Letter, "/MediaBox [0 0 612.00 792.00]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := renderOK(t, Document{Title: "Size", Markdown: "Body.", PageSize: tt.size})
			if !bytes.Contains(res.PDF, []byte(tt.box)) {
				m := regexp.MustCompile(`/MediaBox \[[^\]]*\]`).Find(res.PDF)
				t.Errorf("MediaBox = %s, want %s", m, tt.box)
			}
		})
	}
}

func TestLongTableRepeatsHeader(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Inventory\n\n| Warehouse code | Item | Quantity |\n|---|---|---|\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "| WH-%03d | Item number %d | %d |\n", i, i, i*17)
	}
	res := renderOK(t, Document{Markdown: b.String()})
	pages := pageTexts(t, res.PDF)
	if len(pages) < 3 {
		t.Fatalf("%d pages, want the table to run over at least 3", len(pages))
	}
	for i, p := range pages {
		if !strings.Contains(p, "Warehouse code") {
			t.Errorf("page %d does not repeat the header row", i+1)
		}
	}
	last := flat(pages[len(pages)-1])
	if !strings.Contains(last, "WH-120") || !strings.Contains(last, "2040") {
		t.Error("the last row is missing")
	}
}

func TestHeadingsAreNotStranded(t *testing.T) {
	// Filler of growing length moves the heading down the first page
	// until it would reach the foot; it must always share a page with
	// the paragraph after it.
	for n := 20; n <= 60; n++ {
		md := strings.Repeat("Filler line.\n\n", n) + "## The heading\n\nFirst words of the section follow the heading.\n"
		pages := pageTexts(t, renderOK(t, Document{Markdown: md}).PDF)
		for i, p := range pages {
			if strings.Contains(p, "The heading") && !strings.Contains(flat(p), "First words of the section") {
				t.Fatalf("with %d filler paragraphs the heading is alone at the foot of page %d", n, i+1)
			}
		}
	}
}

func TestImageFormats(t *testing.T) {
	rgba := image.NewNRGBA(image.Rect(0, 0, 60, 40))
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(i * 7)
	}
	encode := func(f func(*bytes.Buffer) error) []byte {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	gray16 := image.NewGray16(image.Rect(0, 0, 30, 20))
	pal := image.NewPaletted(image.Rect(0, 0, 30, 20), color.Palette{color.White, color.Black, color.Transparent})
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"opaque png", chartPNG(t, 300, 200, 1), true},
		{"png with alpha", encode(func(b *bytes.Buffer) error { return png.Encode(b, rgba) }), true},
		{"16-bit gray png", encode(func(b *bytes.Buffer) error { return png.Encode(b, gray16) }), true},
		{"paletted png with transparency", encode(func(b *bytes.Buffer) error { return png.Encode(b, pal) }), true},
		{"jpeg", encode(func(b *bytes.Buffer) error { return jpeg.Encode(b, rgba, nil) }), true},
		{"gif", encode(func(b *bytes.Buffer) error { return gif.Encode(b, pal, nil) }), true},
		{"truncated png", chartPNG(t, 300, 200, 1)[:400], false},
		{"not an image", []byte("hello"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Render(context.Background(), Document{
				Markdown: "![Picture](obj1)",
				Elements: map[string]Image{"obj1": {PNG: tt.data}},
			})
			if !tt.ok {
				var se *render.SourceError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v, want a *render.SourceError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Embedded, []string{"obj1"}) {
				t.Errorf("Embedded = %v", res.Embedded)
			}
			pageTexts(t, res.PDF) // the file reads back
		})
	}
}

func TestLimits(t *testing.T) {
	var se *render.SourceError
	_, err := Render(context.Background(), Document{Markdown: strings.Repeat("a", MaxMarkdownBytes+1)})
	if !errors.As(err, &se) || !strings.Contains(se.Message, "1 MB") {
		t.Errorf("oversized Markdown: err = %v", err)
	}

	long := strings.Repeat("Short paragraph.\n\n", 40*MaxPages) // about 35 a page
	_, err = Render(context.Background(), Document{Markdown: long})
	if !errors.As(err, &se) || !strings.Contains(se.Message, "pages") {
		t.Errorf("too many pages: err = %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Render(ctx, Document{Markdown: "Hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
}

func TestLongWordsAndLinesWrap(t *testing.T) {
	word := strings.Repeat("abcdefghij", 40)
	md := "Para " + word + " end.\n\n```\n" + strings.Repeat("x", 300) + "\n```\n\n| a | b |\n|---|---|\n| " + word + " | 1 |\n"
	res := renderOK(t, Document{Markdown: md})
	text := strings.Join(strings.Fields(strings.Join(pageTexts(t, res.PDF), "")), "")
	// A word cut between letters ends its line with a hyphen.
	if !strings.Contains(text, "-") {
		t.Error("a long word was cut without a hyphen")
	}
	text = strings.ReplaceAll(text, "-", "")
	if got := strings.Count(text, "abcdefghij"); got != 80 {
		t.Errorf("the long word appears %d times in pieces, want 80", got)
	}
	if got := strings.Count(text, "x"); got != 300 {
		t.Errorf("the long code line has %d x, want 300", got)
	}
}

func TestClean(t *testing.T) {
	m := loadMetrics()
	tests := []struct {
		name, in, want string
	}{
		{"ascii", "Plain text.", "Plain text."},
		{"accents kept", "café Zürich Łódź", "café Zürich Łódź"},
		{"decomposed accents composed", "cafe\u0301", "café"},
		{"greek and cyrillic kept", "Ωμέγα Жук", "Ωμέγα Жук"},
		{"emoji kept for an outline font", "launch 🚀 went well 🎉, ok", "launch 🚀 went well 🎉, ok"},
		{"emoji no font has dropped with its space", "launch \U0001FAE8 went well \U0001FAE8, ok", "launch went well, ok"},
		{"emoji sequences split, tones dropped", "a 👨\u200d👩\u200d👧 b 👍🏽 c 🇩🇪", "a 👨👩👧 b 👍 c 🇩🇪"},
		{"cjk kept for a fallback font", "Tokyo (東京) 日本", "Tokyo (東京) 日本"},
		{"rtl kept", "שלום עולם", "שלום עולם"},
		{"arabic shaped", "سلام", "\uFEB3\uFEFC\uFEE1"},
		{"symbol kept", "✓ done", "✓ done"},
		{"invisible dropped", "a\u200bb\u200fc\ufeff", "abc"},
		{"odd spaces", "a\u2009b\u3000c", "a b c"},
		{"controls dropped", "a\x00b\x07c", "abc"},
		{"astral plane kept for an outline font", "𝔘 x", "𝔘 x"},
		{"astral plane no font has", "\U0001D800 x", "\uFFFD x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.clean(tt.in, false); got != tt.want {
				t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMetaText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Q3 review", "Q3 review"},
		{"every language kept", "日本語 שלום Ελληνικά", "日本語 שלום Ελληνικά"},
		{"emoji and controls dropped", "Launch 🚀\x07 plan", "Launch plan"},
		{"spaces collapsed", "  a \n\t b  ", "a b"},
		{"invalid utf-8", "a\xffb", "ab"},
		{"cut", strings.Repeat("x", 600), strings.Repeat("x", 500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metaText(tt.in); got != tt.want {
				t.Errorf("metaText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsNumeric(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"integer", "42", true},
		{"thousands", "1,234,567", true},
		{"decimal", "3.14", true},
		{"negative", "-12.5", true},
		{"parentheses", "(1,200)", true},
		{"percent", "12.4 %", true},
		{"currency", "€48.2", true},
		{"currency suffix", "48.2 €", true},
		{"unit", "1.5bn", true},
		{"word", "Germany", false},
		{"code", "WH-001", false},
		{"empty", "", false},
		{"date-like words", "Q3 2026", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isNumeric(tt.in); got != tt.want {
				t.Errorf("isNumeric(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestUnicodeSampleRenders(t *testing.T) {
	res := renderOK(t, sampleDocs(t)["unicode"])
	// poppler reads emoji from the ActualText over their outlines.
	text := flat(pdftotext(t, res.PDF))
	for _, want := range []string{"Καλημέρα", "Доброе утро", "café", "Zürich", "Łódź", "≤ ≥ →",
		"launch 🚀 went well 🎉, thumbs 👍, family 👨👩👧, flag 🇩🇪,", "東京", "おはようございます",
		"नमस्ते दुनिया, क्षत्रिय", "สวัสดีชาวโลก", "வணக்கம்"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q not found", want)
		}
	}
	if strings.ContainsRune(text, '\uFFFD') {
		t.Error("a replacement character reached the PDF")
	}
}

func TestLargeInputsStayBounded(t *testing.T) {
	const n = 300_000
	tests := []struct {
		name string
		md   string
	}{
		{"one long word", strings.Repeat("x", n)},
		{"one long paragraph", strings.Repeat("word ", n/5)},
		{"emoji everywhere", strings.Repeat("a 🎉 ", n/7)},
		{"one long Thai word", strings.Repeat("สวัสดีชาวโลก", n/12/4)},
		{"one long CJK sentence", strings.Repeat("東京は日本の首都です", n/10/4)},
		{"shaped words everywhere", strings.Repeat("क्षत्रिय 😀 ", n/10/4)},
		{"soft line breaks", strings.Repeat("line\n", n/5)},
		{"long code line", "```\n" + strings.Repeat("y", n) + "\n```"},
		{"huge table cell", "| h |\n|---|\n| " + strings.Repeat("z", n) + " |\n"},
		{"huge table header", "| " + strings.Repeat("long header ", 5000) + " |\n|---|\n| 1 |\n| 2 |\n"},
		{"deep nesting", strings.Repeat("> - ", 2000) + "deep"},
		{"many tiny tables", strings.Repeat("| a |\n|---|\n| 1 |\n\n", n/25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Render(context.Background(), Document{Title: tt.md[:min(len(tt.md), 5000)], Markdown: tt.md})
			var se *render.SourceError
			switch {
			case err == nil:
				if res.Pages < 1 || res.Pages > MaxPages {
					t.Errorf("Pages = %d", res.Pages)
				}
			case errors.As(err, &se):
				if !strings.Contains(se.Message, "pages") {
					t.Errorf("unexpected source error: %v", err)
				}
			default:
				t.Errorf("err = %v", err)
			}
		})
	}
}
