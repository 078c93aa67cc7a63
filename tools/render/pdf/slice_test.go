package pdf

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// withDensity adds a pHYs chunk of ppi pixels per inch after a PNG's
// header, as the diagram renderer writes one.
func withDensity(t *testing.T, data []byte, ppi float64) []byte {
	t.Helper()
	const head = 8 + 25 // signature and IHDR
	var chunk bytes.Buffer
	body := make([]byte, 9)
	ppm := uint32(math.Round(ppi / 0.0254))
	binary.BigEndian.PutUint32(body, ppm)
	binary.BigEndian.PutUint32(body[4:], ppm)
	body[8] = 1
	binary.Write(&chunk, binary.BigEndian, uint32(len(body)))
	chunk.WriteString("pHYs")
	chunk.Write(body)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("pHYs"), body...)))
	out := append([]byte{}, data[:head]...)
	out = append(out, chunk.Bytes()...)
	return append(out, data[head:]...)
}

// placements returns the size of every drawing of an image, page by page.
func placements(t *testing.T, pdf []byte) [][2]float64 {
	t.Helper()
	draw := regexp.MustCompile(`([0-9.]+) 0 0 ([0-9.]+) -?[0-9.]+ -?[0-9.]+ cm /I[^ ]+ Do`)
	var out [][2]float64
	for _, s := range regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`).FindAllSubmatch(pdf, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(s[1]))
		if err != nil {
			continue
		}
		content, _ := io.ReadAll(zr)
		for _, m := range draw.FindAllSubmatch(content, -1) {
			w, _ := strconv.ParseFloat(string(m[1]), 64)
			h, _ := strconv.ParseFloat(string(m[2]), 64)
			out = append(out, [2]float64{w, h})
		}
	}
	return out
}

// A picture that records its density is not shrunk below half its own
// size to fit a page: a tall diagram starts in the room under the text
// and goes on over the next pages, at its proportions, with its caption
// after its last part. One that fits a
// page at that size, or records no density, is drawn once.
func TestTallPictureContinuesOverPages(t *testing.T) {
	tall := chartPNG(t, 300, 4000, 1) // 150 × 2000 pt at 144 dpi: 1000 pt at half
	for _, tc := range []struct {
		name   string
		png    []byte
		parts  int
		width  float64 // points, as drawn
		aspect float64
	}{
		{"tall at 144 dpi", withDensity(t, tall, 144), 2, 75, 300.0 / 4000},
		{"no density", tall, 1, 0, 300.0 / 4000},
		// At 9 dpi half its size would be 80 pages: it goes on over four.
		{"a density that would take many pages", withDensity(t, tall, 9), 4, 0, 300.0 / 4000},
		{"fits at 72 dpi", withDensity(t, chartPNG(t, 300, 1200, 1), 72), 1, 0, 300.0 / 1200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := renderOK(t, Document{Markdown: "# Pipeline\n\nIntro.\n\n![The whole pipeline](obj1)\n\nAfter.", Elements: map[string]Image{"obj1": {PNG: tc.png}}})
			got := placements(t, res.PDF)
			if len(got) != tc.parts {
				t.Fatalf("the picture is drawn %d times, want %d", len(got), tc.parts)
			}
			for _, p := range got {
				if tc.width > 0 && math.Abs(p[0]-tc.width) > 0.5 {
					t.Errorf("drawn %.1f pt wide, want %.1f", p[0], tc.width)
				}
				if math.Abs(p[0]/p[1]/tc.aspect-1) > 0.01 {
					t.Errorf("drawn at %.1f × %.1f, not the picture's proportions", p[0], p[1])
				}
			}
			// The first part starts under the intro on page 1, the others
			// fill the next pages, and the caption follows the last part.
			texts := pageTexts(t, res.PDF)
			if tc.parts > 1 && (len(texts) < tc.parts || !strings.Contains(flat(texts[tc.parts-1]), "The whole pipeline")) {
				t.Errorf("the caption is not on page %d: %q", tc.parts, texts)
			}
		})
	}
}
