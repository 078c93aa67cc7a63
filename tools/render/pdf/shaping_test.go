package pdf

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
	"github.com/switchyardhq/switchyard/tools/render/markdown"
)

// shapedSamples are runs that fpdf's one glyph per character gets wrong,
// as a reader types them.
var shapedSamples = []string{
	"नमस्ते दुनिया, क्षत्रिय", // conjuncts, a vowel sign before its consonant
	"สวัสดีชาวโลก",            // Thai marks stacked over vowels
	"வணக்கம் உலகம்",           // Tamil vowel signs on both sides
	"নমস্কার বিশ্ব",           // Bengali conjuncts
	"पहला बिंदु: श्री, द्वार", // a mark of no width before punctuation
	"😀 🚀 🇩🇪",                  // beyond the Basic Multilingual Plane
}

// renderShaped renders md and returns the PDF and the runs it drew as
// outlines.
func renderShaped(t *testing.T, md string) ([]byte, []shapedRun) {
	t.Helper()
	var runs []shapedRun
	src := []byte(md)
	r := newRenderer(t.Context(), Document{Title: "Shaping"}, src)
	r.shapedRuns = &runs
	if err := r.run(markdown.Parse(src)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), runs
}

func TestShapedScriptsReadBack(t *testing.T) {
	md := "# Shaping\n\n" + strings.Join(shapedSamples, "\n\n") + "\n"
	data, runs := renderShaped(t, md)
	text := pdftotext(t, data)
	for _, want := range shapedSamples {
		if !strings.Contains(text, want) {
			t.Errorf("%q not read back from:\n%s", want, text)
		}
	}
	if len(runs) == 0 {
		t.Fatal("no run was drawn as outlines")
	}
}

// TestShapedRunsDrawTheShapersGlyphs checks each run drawn as outlines
// against the shaper's own output: as many glyphs, filled, at the
// advance layout measured, one run after the other along the line.
func TestShapedRunsDrawTheShapersGlyphs(t *testing.T) {
	md := strings.Join(shapedSamples, "\n\n") + "\n"
	_, runs := renderShaped(t, md)
	seen := map[string]bool{}
	for _, run := range runs {
		seen[run.text] = true
		sh, ok := fonts.Shape(pdfFallbacks()[run.fb-1].src, run.text, bodySize)
		if !ok {
			t.Fatalf("%q: the shaper cannot read its font", run.text)
		}
		if run.glyphs != sh.Glyphs() {
			t.Errorf("%q: %d glyphs drawn, the shaper gives %d", run.text, run.glyphs, sh.Glyphs())
		}
		if run.contours < sh.Glyphs() {
			t.Errorf("%q: %d outlines filled for %d glyphs", run.text, run.contours, sh.Glyphs())
		}
		if math.Abs(run.w-sh.Advance) > 0.01 || math.Abs(run.advance-sh.Advance) > 0.01 {
			t.Errorf("%q: laid out %.2f wide, drawn %.2f, shaped %.2f", run.text, run.w, run.advance, sh.Advance)
		}
		if run.textW <= 0 {
			t.Errorf("%q: no invisible text over the outlines", run.text)
		}
	}
	for _, word := range []string{"नमस्ते", "क्षत्रिय", "สวัสดีชาวโลก", "வணக்கம்", "😀", "🚀", "🇩🇪"} {
		if !seen[word] {
			t.Errorf("%q was not drawn as outlines (runs: %v)", word, runTexts(runs))
		}
	}
	// Runs on one line follow each other at their shaped advances: the
	// second word of "नमस्ते दुनिया" starts a space after the first ends.
	first, second := findRun(runs, "नमस्ते"), findRun(runs, "दुनिया")
	if first == nil || second == nil {
		t.Fatal("the Hindi words were not drawn")
	}
	space := loadMetrics().width(regular, bodySize, " ")
	if first.y != second.y || math.Abs(second.x-(first.x+first.w+space)) > 0.01 {
		t.Errorf("दुनिया at (%.2f, %.2f), want (%.2f, %.2f)", second.x, second.y, first.x+first.w+space, first.y)
	}
}

// TestConjunctIsOneGlyph checks that shaping does what drawing character
// by character could not: "क्ष" (ka, virama, ssa) is one glyph, and the
// short i of "त्रि" comes before its cluster.
func TestConjunctIsOneGlyph(t *testing.T) {
	_, runs := renderShaped(t, "क्षत्रिय\n")
	run := findRun(runs, "क्षत्रिय")
	if run == nil {
		t.Fatalf("not drawn as outlines: %v", runTexts(runs))
	}
	if n := utf8.RuneCountInString(run.text); run.glyphs >= n {
		t.Errorf("%d glyphs for %d characters: no conjunct formed", run.glyphs, n)
	}
	cmapW := 0.0
	for _, c := range run.text {
		cmapW += float64(pdfFallbacks()[run.fb-1].width(c)) * bodySize / 1000
	}
	if math.Abs(run.w-cmapW) < 0.01 {
		t.Errorf("laid out at the width of its characters (%.2f), not of its glyphs", cmapW)
	}
}

// TestLatinStaysText checks that text the character map sets right is
// not turned into outlines.
func TestLatinStaysText(t *testing.T) {
	_, runs := renderShaped(t, "Plain text, café, Καλημέρα, Доброе утро, Tiếng Việt, 東京, שלום.\n")
	if len(runs) != 0 {
		t.Errorf("drawn as outlines: %v", runTexts(runs))
	}
}

// TestShapedLinesBreakAtShapedWidths checks that lines of shaped words,
// and of Thai, which has no spaces between words and is cut where the
// line ends, never run past the text width, and that no cut takes a
// mark from its letter or splits a conjunct.
func TestShapedLinesBreakAtShapedWidths(t *testing.T) {
	m := loadMetrics()
	const width = 120
	for _, text := range []string{
		strings.Repeat("नमस्ते क्षत्रिय ", 20),
		strings.Repeat("สวัสดีชาวโลกภาษาไทย", 8),
		strings.Repeat("क्षत्रियक्षत्रिय", 8),
	} {
		ls := m.breakLines([]span{{m.clean(text, false), bodyStyle}}, width)
		if len(ls) < 3 {
			t.Errorf("%d lines for %d characters at %d pt", len(ls), utf8.RuneCountInString(text), width)
		}
		var back strings.Builder
		for i, l := range ls {
			sum := 0.0
			for j, f := range l.frags {
				sum += m.styleWidth(f.st, f.text)
				back.WriteString(f.text)
				if first, _ := utf8.DecodeRuneInString(f.text); j == 0 && unicode.In(first, unicode.Mn, unicode.Mc) {
					t.Errorf("line %d starts with a mark: %q", i, f.text)
				}
				if last, _ := utf8.DecodeLastRuneInString(f.text); j == len(l.frags)-1 && i < len(ls)-1 && (last == '\u094D' || last == '\u0E3A') {
					t.Errorf("line %d ends with a virama: %q", i, f.text)
				}
			}
			if sum > width+0.01 {
				t.Errorf("line %d is %.2f wide, more than %d", i, sum, width)
			}
			if math.Abs(sum-l.w) > 0.01 {
				t.Errorf("line %d: laid out %.2f, its runs measure %.2f", i, l.w, sum)
			}
		}
		if got, want := strings.ReplaceAll(back.String(), " ", ""), strings.ReplaceAll(text, " ", ""); got != want {
			t.Errorf("the lines hold %q, want %q", got, want)
		}
	}
}

func findRun(runs []shapedRun, text string) *shapedRun {
	for i := range runs {
		if runs[i].text == text {
			return &runs[i]
		}
	}
	return nil
}

func runTexts(runs []shapedRun) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.text)
	}
	return out
}

// TestEmojiNeedAnOutline checks the test a font passes before it draws
// an emoji: a glyph with an outline, which a colour font's bitmap
// emoji lack.
func TestEmojiNeedAnOutline(t *testing.T) {
	k := fallbackFor('😀')
	if k == 0 {
		t.Fatal("no font draws 😀 (fonts-symbola is missing)")
	}
	f := pdfFallbacks()[k-1]
	if !f.inks('😀') {
		t.Errorf("%s: 😀 has no outline", f.src.Name)
	}
	if f.inks(' ') {
		t.Errorf("%s: the space has an outline", f.src.Name)
	}
}

// TestOneToOneRuns checks which runs in a fallback font the shaper sets
// as the character map does, so that they stay text: long runs whose
// widths round in thousandths and kerned Latin do, Devanagari does not.
func TestOneToOneRuns(t *testing.T) {
	tests := []struct {
		text    string
		outline bool
	}{
		{strings.Repeat("東京は日本の首都です", 30), false},
		{"AVATAR Tiếng Việt có dấu WAVY", false},
		{strings.Repeat("ẞ Ŋ ŧ ħ ĸ ", 40), false},
		{"नमस्ते", true},
		{"🚀", true},
	}
	m := loadMetrics()
	for _, tt := range tests {
		var fb uint8
		for _, r := range tt.text {
			if fb = m.fontOf(regular, r, 0, 0); fb != 0 {
				break
			}
		}
		if fb == 0 {
			t.Errorf("%.20q: no fallback font sets it", tt.text)
			continue
		}
		st := style{face: regular, size: bodySize, fb: fb}
		if got := m.outlined(st, tt.text); got != tt.outline {
			t.Errorf("%.20q in %s: outlined %v, want %v", tt.text, pdfFallbacks()[fb-1].src.Name, got, tt.outline)
		}
	}
}

// TestAppendNum checks the numbers written into glyph paths, the scale
// above all: size over units per em is small, and a rounded scale would
// draw every glyph too small or too large.
func TestAppendNum(t *testing.T) {
	tests := []struct {
		v    float64
		prec int
		want string
	}{
		{10.5 / 2048, 8, "0.00512695"},
		{123.3333333, 1, "123.3"},
		{-0.04, 1, "0"},
		{595.2756, 3, "595.276"},
		{12, 3, "12"},
	}
	for _, tt := range tests {
		if got := string(appendNum(nil, tt.v, tt.prec)); got != tt.want {
			t.Errorf("appendNum(%v, %d) = %s, want %s", tt.v, tt.prec, got, tt.want)
		}
	}
}

// TestJoinersReachTheShaper checks that a zero-width joiner in
// Devanagari is kept for the shaper: "क्\u200Dष" asks for the half form
// of ka instead of the conjunct "क्ष", and reads back as typed.
func TestJoinersReachTheShaper(t *testing.T) {
	const joined, conjunct = "क्\u200Dष", "क्ष"
	m := loadMetrics()
	if got := m.clean(joined, false); got != joined {
		t.Fatalf("clean(%q) = %q: the joiner was dropped", joined, got)
	}
	if got := m.clean("a\u200Db", false); got != "ab" {
		t.Errorf("clean dropped no joiner between Latin letters: %q", got)
	}
	data, runs := renderShaped(t, joined+" "+conjunct+"\n")
	j, c := findRun(runs, joined), findRun(runs, conjunct)
	if j == nil || c == nil {
		t.Fatalf("runs %q, want %q and %q", runTexts(runs), joined, conjunct)
	}
	if j.glyphs <= c.glyphs {
		t.Errorf("%q drew %d glyphs, the conjunct %d: the joiner changed nothing", joined, j.glyphs, c.glyphs)
	}
	if text := pdftotext(t, data); !strings.Contains(text, joined) {
		t.Errorf("%q not read back from %q", joined, text)
	}
}
