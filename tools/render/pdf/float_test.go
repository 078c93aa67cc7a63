package pdf

import (
	"bytes"
	"compress/zlib"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// portrait is a picture 300 × 1000 pixels recording 72 ppi: 225 × 750
// pt at screen density, so taller than a page's text and fitted to it.
func portrait(t *testing.T) []byte {
	return withDensity(t, chartPNG(t, 300, 1000, 2), 72)
}

// filler is n paragraphs of four lines or so each.
func filler(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("Paragraph " + strconv.Itoa(i+1) + ". ")
		b.WriteString(strings.Repeat("The pipeline checks every change before it ships to a customer. ", 5))
		b.WriteString("\n\n")
	}
	return b.String()
}

// fitPageHeight is the height the portrait picture is drawn at on a page
// of its own, with a one-line caption.
func fitPageHeight(t *testing.T) float64 {
	t.Helper()
	res := renderOK(t, Document{Markdown: "![Pipeline](obj1)", Elements: map[string]Image{"obj1": {PNG: portrait(t)}}})
	got := placements(t, res.PDF)
	if len(got) != 1 {
		t.Fatalf("alone, the picture is drawn %d times", len(got))
	}
	return got[0][1]
}

// pageOf returns the 1-based page whose text holds s, 0 when none does.
func pageOf(texts []string, s string) int {
	for i, p := range texts {
		if strings.Contains(flat(p), s) {
			return i + 1
		}
	}
	return 0
}

// A figure that does not fit under the text on its page is shrunk into
// the room left when it keeps 75 % of its size or more: it stays on the
// page, with its caption, instead of leaving the page blank.
func TestFigureShrinksIntoTheRoomLeft(t *testing.T) {
	full := fitPageHeight(t)
	res := renderOK(t, Document{Markdown: "## Pipeline\n\nIntro.\n\n![Pipeline figure](obj1)\n\nAfter.", Elements: map[string]Image{"obj1": {PNG: portrait(t)}}})
	got := placements(t, res.PDF)
	if len(got) != 1 {
		t.Fatalf("the picture is drawn %d times, want 1", len(got))
	}
	h := got[0][1]
	if h >= full-0.5 || h < shrinkFloor*full {
		t.Errorf("drawn %.1f pt tall; alone on a page %.1f: want it shrunk, to no less than %.1f", h, full, shrinkFloor*full)
	}
	if math.Abs(got[0][0]/got[0][1]-0.3) > 0.005 {
		t.Errorf("drawn at %.1f × %.1f, not the picture's proportions", got[0][0], got[0][1])
	}
	texts := pageTexts(t, res.PDF)
	if p := pageOf(texts, "Pipeline figure"); p != 1 || pageOf(texts, "Intro.") != 1 {
		t.Errorf("intro on page %d, caption on page %d; want both on page 1: %q", pageOf(texts, "Intro."), p, texts)
	}
}

// A figure that would have to shrink below the floor floats: the text
// after it fills the page, and the figure opens the next page at its
// full size with its caption. The structure tree keeps the Markdown's
// order.
func TestFigureFloatsToTheNextPage(t *testing.T) {
	full := fitPageHeight(t)
	md := filler(4) + "![Pipeline figure](obj1)\n\nText after the figure.\n\n" + filler(1)
	res := renderOK(t, Document{Markdown: md, Elements: map[string]Image{"obj1": {PNG: portrait(t)}}})
	got := placements(t, res.PDF)
	if len(got) != 1 || math.Abs(got[0][1]-full) > 0.5 {
		t.Fatalf("placements %v, want one at %.1f pt tall", got, full)
	}
	texts := pageTexts(t, res.PDF)
	if pageOf(texts, "Text after the figure.") != 1 {
		t.Errorf("the text after the figure is on page %d, want 1 (it fills the room the figure left)", pageOf(texts, "Text after the figure."))
	}
	if pageOf(texts, "Pipeline figure") != 2 {
		t.Errorf("the caption is on page %d, want 2", pageOf(texts, "Pipeline figure"))
	}
	// The figure stands at the top of page 2: its picture is the first
	// thing drawn there.
	if y := imageTop(t, res.PDF, 2); math.Abs(y-marginTop) > 0.5 {
		t.Errorf("the picture's top is at %.1f pt on page 2, want the text area's top %.1f", y, marginTop)
	}
	root, parents, _, _ := readTree(t, res.PDF)
	checkMarks(t, res.PDF, root, parents)
	if o := outline(root); !strings.Contains(o, "P×4 Figure{Caption} P") {
		t.Errorf("structure %s: want the figure between the fourth and fifth paragraph", o)
	}
}

// A waiting figure does not pass a heading when the page before it is at
// least half full; when it is less, the heading and its text fill the
// page rather than leave it mostly blank.
func TestFloatStopsAtAHeadingOnAFullPage(t *testing.T) {
	for _, tc := range []struct {
		paras   int
		heading int // page of the heading, 0: after the figure's
	}{
		{paras: 6, heading: 0},
		{paras: 3, heading: 1},
	} {
		md := filler(tc.paras) + "![Pipeline figure](obj1)\n\n## Next section\n\nMore text.\n"
		res := renderOK(t, Document{Markdown: md, Elements: map[string]Image{"obj1": {PNG: portrait(t)}}})
		texts := pageTexts(t, res.PDF)
		if pageOf(texts, "Pipeline figure") != 2 {
			t.Errorf("%d paragraphs: caption on page %d, want 2", tc.paras, pageOf(texts, "Pipeline figure"))
		}
		p := pageOf(texts, "Next section")
		if tc.heading == 0 && p <= 2 || tc.heading != 0 && p != tc.heading {
			t.Errorf("%d paragraphs: heading on page %d, want %d (0: after the figure's page)", tc.paras, p, tc.heading)
		}
	}
}

// Figures float in order: a second one never appears before the first.
func TestFloatsKeepTheirOrder(t *testing.T) {
	md := filler(4) + "![First figure](obj1)\n\n![Second figure](obj2)\n\nEnd.\n"
	res := renderOK(t, Document{Markdown: md, Elements: map[string]Image{
		"obj1": {PNG: portrait(t)},
		"obj2": {PNG: withDensity(t, chartPNG(t, 600, 400, 3), 144)},
	}})
	texts := pageTexts(t, res.PDF)
	p1, p2 := pageOf(texts, "First figure"), pageOf(texts, "Second figure")
	if p1 != 2 || p2 < p1 {
		t.Errorf("first figure on page %d, second on page %d; want 2 and not before it: %q", p1, p2, texts)
	}
	if pageOf(texts, "End.") != 1 {
		t.Errorf("the text after the figures is on page %d, want 1", pageOf(texts, "End."))
	}
	root, parents, _, _ := readTree(t, res.PDF)
	checkMarks(t, res.PDF, root, parents)
}

// imageTop is the top of the first image drawn on page p, in points from
// the page's top edge (A4).
func imageTop(t *testing.T, pdf []byte, p int) float64 {
	t.Helper()
	draw := regexp.MustCompile(`[0-9.]+ 0 0 ([0-9.]+) -?[0-9.]+ (-?[0-9.]+) cm /I[^ ]+ Do`)
	n := 0
	for _, s := range regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`).FindAllSubmatch(pdf, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(s[1]))
		if err != nil {
			continue
		}
		content, _ := io.ReadAll(zr)
		if !bytes.Contains(content, []byte(" BT")) && !bytes.Contains(content, []byte("Do")) {
			continue
		}
		n++
		if n != p {
			continue
		}
		m := draw.FindSubmatch(content)
		if m == nil {
			t.Fatalf("no image drawn on page %d", p)
		}
		h, _ := strconv.ParseFloat(string(m[1]), 64)
		y, _ := strconv.ParseFloat(string(m[2]), 64)
		return 841.89 - (y + h)
	}
	t.Fatalf("no page %d", p)
	return 0
}

// A picture taller than a page at its least readable size is cut between
// its nodes: every cut falls in a gap of background, never through a
// node, even where the page would end inside one.
func TestTallPictureIsCutBetweenNodes(t *testing.T) {
	const w, h, period, node = 300, 6000, 240, 160
	data, inNode := rendertest.Stripes(t, w, h, period, node)
	// At 144 ppi half its size is 75 × 1500 pt: two or three pages.
	res := renderOK(t, Document{Markdown: "Intro.\n\n![Tall](obj1)\n\nAfter.", Elements: map[string]Image{"obj1": {PNG: withDensity(t, data, 144)}}})
	parts := placements(t, res.PDF)
	if len(parts) < 2 {
		t.Fatalf("drawn %d times, want it over pages", len(parts))
	}
	drawnH := parts[0][1]
	done := 0.0
	for i, c := range clipHeights(t, res.PDF) {
		if i == len(parts)-1 {
			break // the last part ends with the picture
		}
		done += c
		row := int(done / drawnH * h)
		if inNode(row) || inNode(row-1) {
			t.Errorf("cut %d at row %d runs through a node", i+1, row)
		}
	}
}

// clipHeights lists the heights of the clip rectangles of sliced
// pictures, in drawing order.
func clipHeights(t *testing.T, pdf []byte) []float64 {
	t.Helper()
	clip := regexp.MustCompile(`-?[0-9.]+ -?[0-9.]+ [0-9.]+ (-?[0-9.]+) re W n`)
	var out []float64
	for _, s := range regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`).FindAllSubmatch(pdf, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(s[1]))
		if err != nil {
			continue
		}
		content, _ := io.ReadAll(zr)
		for _, m := range clip.FindAllSubmatch(content, -1) {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			out = append(out, math.Abs(v))
		}
	}
	return out
}
