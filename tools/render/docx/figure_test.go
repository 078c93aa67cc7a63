package docx

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// stripedPNG is a diagram-like picture w × h pixels recording ppi: bands
// of "nodes" (filled rows) separated by gaps of background crossed by a
// thin vertical "edge". inNode tells the rows of nodes.
func stripedPNG(t *testing.T, w, h int, ppi float64) (data []byte, inNode func(row int) bool) {
	t.Helper()
	data, inNode = rendertest.Stripes(t, w, h, 240, 160)
	if ppi == 0 {
		return data, inNode
	}
	// A pHYs chunk after the header, as the diagram renderer writes it.
	body := make([]byte, 9)
	ppm := uint32(math.Round(ppi / 0.0254))
	binary.BigEndian.PutUint32(body, ppm)
	binary.BigEndian.PutUint32(body[4:], ppm)
	body[8] = 1
	var chunk bytes.Buffer
	binary.Write(&chunk, binary.BigEndian, uint32(len(body)))
	chunk.WriteString("pHYs")
	chunk.Write(body)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("pHYs"), body...)))
	const head = 8 + 25
	out := append(append(append([]byte{}, data[:head]...), chunk.Bytes()...), data[head:]...)
	return out, inNode
}

// shownPart is a picture as document.xml draws it.
type shownPart struct {
	cx, cy      int64
	top, bottom int // srcRect, cropWhole units
	descr       string
	breakAfter  bool // its paragraph lets the page end after it
}

func shownParts(t *testing.T, doc []byte) []shownPart {
	t.Helper()
	para := regexp.MustCompile(`<w:p>.*?</w:p>`)
	extent := regexp.MustCompile(`<wp:extent cx="(\d+)" cy="(\d+)"/>`)
	descr := regexp.MustCompile(`<wp:docPr [^>]*descr="([^"]*)"`)
	crop := regexp.MustCompile(`<a:srcRect t="(\d+)" b="(\d+)"/>`)
	var out []shownPart
	for _, p := range para.FindAll(doc, -1) {
		m := extent.FindSubmatch(p)
		if m == nil {
			continue
		}
		var s shownPart
		s.cx, _ = strconv.ParseInt(string(m[1]), 10, 64)
		s.cy, _ = strconv.ParseInt(string(m[2]), 10, 64)
		if d := descr.FindSubmatch(p); d != nil {
			s.descr = string(d[1])
		}
		if c := crop.FindSubmatch(p); c != nil {
			s.top, _ = strconv.Atoi(string(c[1]))
			s.bottom, _ = strconv.Atoi(string(c[2]))
		}
		s.breakAfter = bytes.Contains(p, []byte(`<w:keepNext w:val="0"/>`))
		out = append(out, s)
	}
	return out
}

// A picture that fitting to the page would shrink below half its own
// size is drawn at half its size and cut into parts, one a page, each
// the image cropped to its band; the cuts run between its nodes.
func TestTallPictureIsCutIntoParts(t *testing.T) {
	const w, h = 300, 6000
	data, inNode := stripedPNG(t, w, h, 144)
	_, parts := renderParts(t, Document{Title: "Tall", Markdown: "Intro.\n\n![Pipeline](obj1)\n\nAfter.", Elements: map[string]Image{"obj1": {PNG: data}}})
	got := shownParts(t, parts["word/document.xml"])
	if len(got) < 2 || len(got) > maxPictureParts {
		t.Fatalf("drawn in %d parts, want 2 to %d: %+v", len(got), maxPictureParts, got)
	}
	half := int64(0.5 * w / 144 * emuPerInch) // half its size: 1.04 in wide
	var total int64
	for i, p := range got {
		if math.Abs(float64(p.cx-half)) > float64(half)/1000 {
			t.Errorf("part %d is %d EMU wide, want %d (half its own size)", i+1, p.cx, half)
		}
		if p.cy > maxPartHeight || i == len(got)-1 && p.cy > maxPictureHeight {
			t.Errorf("part %d is %d EMU tall: more than a page holds", i+1, p.cy)
		}
		if i == 0 && p.top != 0 || i == len(got)-1 && p.bottom != 0 {
			t.Errorf("part %d crops %d from the top, %d from the bottom: the picture is not whole", i+1, p.top, p.bottom)
		}
		if i > 0 && p.top != cropWhole-got[i-1].bottom {
			t.Errorf("part %d starts at %d, the part before ends at %d", i+1, p.top, cropWhole-got[i-1].bottom)
		}
		if i > 0 {
			row := p.top * h / cropWhole
			if inNode(row) || inNode(row-1) {
				t.Errorf("the cut above part %d, at row %d, runs through a node", i+1, row)
			}
		}
		// Each part keeps the picture's scale: its height is its share.
		share := float64(cropWhole-p.top-p.bottom) / cropWhole
		if want := share * float64(half) * h / w; math.Abs(float64(p.cy)-want) > want*0.01+2 {
			t.Errorf("part %d is %d EMU tall for %.3f of the picture, want %.0f", i+1, p.cy, share, want)
		}
		if want := i < len(got)-1; p.breakAfter != want {
			t.Errorf("part %d: the page may end after it: %v, want %v", i+1, p.breakAfter, want)
		}
		if i > 0 && !strings.HasSuffix(p.descr, "(continued)") || i == 0 && p.descr != "Pipeline" {
			t.Errorf("part %d's alternative text is %q", i+1, p.descr)
		}
		total += p.cy
	}
	if want := float64(half) * h / w; math.Abs(float64(total)-want) > want*0.005 {
		t.Errorf("the parts add up to %d EMU, want %.0f", total, want)
	}
}

// A picture that records no density, or that stays readable at the
// height that keeps it on one page with its caption, is one picture.
func TestPictureOnOnePage(t *testing.T) {
	noDensity, _ := stripedPNG(t, 300, 6000, 0)
	fits, _ := stripedPNG(t, 300, 1000, 144)
	for name, data := range map[string][]byte{"no density": noDensity, "readable on a page": fits} {
		_, parts := renderParts(t, Document{Title: "One", Markdown: "![Pipeline](obj1)", Elements: map[string]Image{"obj1": {PNG: data}}})
		got := shownParts(t, parts["word/document.xml"])
		if len(got) != 1 || got[0].top != 0 || got[0].bottom != 0 || got[0].cy > maxPictureHeight {
			t.Errorf("%s: drawn as %+v, want one uncropped picture at most %d EMU tall", name, got, maxPictureHeight)
		}
	}
}
