package artifacts

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"image/png"
	"io"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

// tallDiagram is a short chain with a branch: drawn top to bottom for
// portrait it is about twice as tall as wide, left to right for
// landscape four times as wide as tall.
const tallDiagram = `digraph { start -> check -> approve -> ship -> done; check -> reject -> done }`

// A diagram folded into a document keeps the aspect and theme it was made
// with: the document embeds the very picture create_diagram drew, and
// places it with that picture's proportions, in a PDF and in Word, in the
// request that made the diagram and in a later one whose client echoes
// the diagram's theme and aspect.
func TestEmbeddedDiagramKeepsItsAspectAndTheme(t *testing.T) {
	args := `{"title":"Fulfilment","language":"dot","theme":"dark","aspect":"portrait","source":` + mustQuote(tallDiagram) + `}`
	for _, tc := range []struct {
		name, tool string
		later      bool
	}{
		{"pdf", tools.NameCreateDocument, false},
		{"docx", tools.NameCreateWordDocument, false},
		{"pdf in a later request", tools.NameCreateDocument, true},
		{"docx in a later request", tools.NameCreateWordDocument, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			made := h.mustCall(tools.NameCreateDiagram, args).Artifacts[0]
			source, err := base64.StdEncoding.DecodeString(made.ImageBase64)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(source))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Height <= cfg.Width {
				t.Fatalf("the portrait diagram is %d×%d", cfg.Width, cfg.Height)
			}
			if tc.later {
				if err := h.nextRequest(map[string]tools.ObjectRef{"obj1": {Kind: made.Type, Source: made.Source,
					Title: made.Title, Theme: made.Theme, Aspect: made.Aspect}}); err != nil {
					t.Fatal(err)
				}
			}
			doc := h.mustCall(tc.tool, `{"title":"Report","markdown":"# Fulfilment\n\n![How an order ships](obj1)\n"}`).Artifacts[0]
			file := h.files.files[doc.FileID]
			want := float64(cfg.Width) / float64(cfg.Height)
			var pixels, placed float64
			if tc.tool == tools.NameCreateDocument {
				pixels, placed = pdfImageAspects(t, file, source)
			} else {
				pixels, placed = docxImageAspects(t, file, source)
			}
			for what, got := range map[string]float64{"pixels": pixels, "placement": placed} {
				if math.Abs(got/want-1) > 0.01 {
					t.Errorf("the embedded picture's %s aspect is %.3f, the diagram's %.3f", what, got, want)
				}
			}
		})
	}
}

// pdfImageAspects returns the aspect (width over height) of the one image
// in a PDF, in pixels and as drawn on the page, and checks that its pixels
// are source's: fpdf copies a PNG's compressed rows as they are.
func pdfImageAspects(t *testing.T, pdf, source []byte) (pixels, placed float64) {
	t.Helper()
	if !bytes.Contains(pdf, pngIDAT(t, source)) {
		t.Error("the PDF does not hold the diagram's pixels")
	}
	dims := regexp.MustCompile(`/Subtype /Image\s*/Width (\d+)\s*/Height (\d+)`).FindAllSubmatch(pdf, -1)
	if len(dims) != 1 {
		t.Fatalf("%d images in the PDF", len(dims))
	}
	pixels = ratio(t, dims[0][1], dims[0][2])
	draw := regexp.MustCompile(`([0-9.]+) 0 0 ([0-9.]+) [0-9.]+ [0-9.]+ cm /I[^ ]+ Do`)
	for _, s := range regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`).FindAllSubmatch(pdf, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(s[1]))
		if err != nil {
			continue
		}
		content, _ := io.ReadAll(zr)
		if m := draw.FindSubmatch(content); m != nil {
			return pixels, ratio(t, m[1], m[2])
		}
	}
	t.Fatal("the PDF draws no image")
	return 0, 0
}

// docxImageAspects is pdfImageAspects for a Word file, whose media part
// must be source itself.
func docxImageAspects(t *testing.T, docx, source []byte) (pixels, placed float64) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		t.Fatal(err)
	}
	var media, body []byte
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case f.Name == "word/document.xml":
			body = data
		case regexp.MustCompile(`^word/media/`).MatchString(f.Name):
			if media != nil {
				t.Fatal("more than one image in the Word file")
			}
			media = data
		}
	}
	if !bytes.Equal(media, source) {
		t.Error("the Word file's image is not the diagram's picture")
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(media))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<wp:extent cx="(\d+)" cy="(\d+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatal("the Word file places no image")
	}
	return float64(cfg.Width) / float64(cfg.Height), ratio(t, m[1], m[2])
}

func ratio(t *testing.T, w, h []byte) float64 {
	t.Helper()
	x, err1 := strconv.ParseFloat(string(w), 64)
	y, err2 := strconv.ParseFloat(string(h), 64)
	if err1 != nil || err2 != nil || y == 0 {
		t.Fatalf("size %s × %s", w, h)
	}
	return x / y
}

// pngIDAT is the compressed pixel data of a PNG, its IDAT chunks joined.
func pngIDAT(t *testing.T, data []byte) []byte {
	t.Helper()
	var idat []byte
	for rest := data[8:]; len(rest) >= 12; {
		n := binary.BigEndian.Uint32(rest)
		if string(rest[4:8]) == "IDAT" {
			idat = append(idat, rest[8:8+n]...)
		}
		rest = rest[12+n:]
	}
	if len(idat) == 0 {
		t.Fatal("a PNG without pixels")
	}
	return idat
}

// Editing a diagram's source keeps the theme and aspect it was made with.
func TestDiagramUpdateKeepsItsThemeAndAspect(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateDiagram, `{"title":"Flow","language":"dot","theme":"dark","aspect":"portrait","source":"digraph { a -> b }"}`)
	a := h.mustCall(tools.NameUpdateObject, `{"object_id":"obj1","source":`+mustQuote(tallDiagram)+`}`).Artifacts[0]
	if a.Theme != "dark" || a.Aspect != "portrait" {
		t.Errorf("the updated diagram is %q and %q", a.Theme, a.Aspect)
	}
}

// A chart a document draws from its source is drawn at the density the
// document shows it at; one create_chart drew just before is taken as
// it is, rather than drawn again.
func TestEmbeddedChartDensity(t *testing.T) {
	for _, tc := range []struct {
		name       string
		drawnFirst bool
		width      string
	}{{"from its source", false, "1000"}, {"after create_chart", true, "1600"}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			made := h.mustCall(tools.NameCreateChart, barArgs).Artifacts[0]
			if !tc.drawnFirst {
				// A later request on a fresh process: only the source is left.
				ids := h.env.IDs
				h = newHarness(t)
				h.env.IDs = ids
				if err := h.nextRequest(map[string]tools.ObjectRef{"obj1": {Kind: "chart", Source: made.Source, Title: made.Title}}); err != nil {
					t.Fatal(err)
				}
			}
			doc := h.mustCall(tools.NameCreateDocument, `{"title":"Q1","markdown":"![](obj1)"}`).Artifacts[0]
			m := regexp.MustCompile(`/Subtype /Image\s*/Width (\d+)`).FindSubmatch(h.files.files[doc.FileID])
			if m == nil || string(m[1]) != tc.width {
				t.Errorf("the embedded chart's width: %q, want %s", m, tc.width)
			}
		})
	}
}

// A diagram a document draws from its source is drawn no larger than
// the document shows it, in the aspect it was made in.
func TestEmbeddedDiagramDensity(t *testing.T) {
	h := newHarness(t)
	src := `digraph { rankdir=LR; a -> b -> c -> d -> e -> f -> g -> h -> i -> j; a -> x -> j }`
	made := h.mustCall(tools.NameCreateDiagram, `{"title":"Chain","source":`+mustQuote(src)+`}`).Artifacts[0]
	full, err := base64.StdEncoding.DecodeString(made.ImageBase64)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width <= embedDiagramWidth {
		t.Fatalf("the diagram is only %d pixels wide", cfg.Width)
	}
	ids := h.env.IDs
	h = newHarness(t)
	h.env.IDs = ids
	if err := h.nextRequest(map[string]tools.ObjectRef{"obj1": {Kind: "diagram", Source: made.Source, Title: made.Title}}); err != nil {
		t.Fatal(err)
	}
	doc := h.mustCall(tools.NameCreateDocument, `{"title":"Q1","markdown":"![](obj1)"}`).Artifacts[0]
	m := regexp.MustCompile(`/Subtype /Image\s*/Width (\d+)\s*/Height (\d+)`).FindSubmatch(h.files.files[doc.FileID])
	if m == nil {
		t.Fatal("no image in the PDF")
	}
	if w, _ := strconv.Atoi(string(m[1])); w != embedDiagramWidth {
		t.Errorf("the embedded diagram is %s pixels wide, want %d", m[1], embedDiagramWidth)
	}
	if got, want := ratio(t, m[1], m[2]), float64(cfg.Width)/float64(cfg.Height); math.Abs(got/want-1) > 0.01 {
		t.Errorf("the embedded diagram's aspect is %.3f, the diagram's %.3f", got, want)
	}
}
