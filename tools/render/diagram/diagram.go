package diagram

import (
	"context"
	"fmt"
	"image"
	"math"
	"strings"

	"git.sr.ht/~sbinet/gg"
	"github.com/switchyardhq/switchyard/tools/render"
)

// Source languages.
const (
	LanguageDOT = "dot"
)

// Limits on what one diagram may cost.
const (
	// MaxSourceBytes is the largest source accepted.
	MaxSourceBytes = 256 << 10
	// MaxNodes and MaxEdges bound the graph Graphviz lays out: more
	// than a reader can follow, and a layout of a few seconds at most.
	MaxNodes = 500
	MaxEdges = 1000
	// MaxPixels bounds the output image; larger layouts are drawn at a
	// lower density to fit.
	MaxPixels = 16 << 20
	// MaxSide bounds either side of the output image, in pixels.
	MaxSide = 8192
)

// Scale is the output density: pixels per Graphviz point. Graphviz's own
// PNG output uses 96 dpi, 4/3 pixel per point; twice 72 dpi keeps text
// crisp on high-density screens and in print while staying close to the
// size a viewer expects at 100 % zoom.
const Scale = 2.0

// margin is the blank border around the drawing, in points.
const margin = 12.0

// Diagram is a diagram source and how to present it.
type Diagram struct {
	// Source is the diagram text: one Graphviz DOT graph. Required.
	Source string
	// Language is the language of Source. Only "dot" (Graphviz DOT,
	// also accepted as "graphviz") is supported; empty means "dot".
	Language string
	// Theme is "light" (white background, the default when empty) or
	// "dark" (dark background, light text).
	Theme string
	// Aspect is "landscape" (the default when empty), "portrait" or
	// "square". It picks the layout direction: ranks run left to right
	// for landscape and top to bottom otherwise, unless the other
	// direction comes out much closer to the asked proportions (a wide
	// tree is better drawn top to bottom even in landscape). A square
	// diagram is then padded to a square canvas. A rankdir in Source
	// takes precedence.
	Aspect string
}

// Render lays d out with Graphviz and returns it as a PNG image. Problems
// with d (a DOT syntax error, an unknown language or theme, a graph over
// the limits, a layout past MaxLayoutTime) are reported as
// *render.SourceError with a message for the author of the source.
// Render is safe for concurrent use; layouts run one at a time, in a
// worker process, and when ctx ends the layout in progress is stopped and
// Render returns.
func Render(ctx context.Context, d Diagram) ([]byte, error) {
	return renderWithin(ctx, d, canvasLimit{pixels: MaxPixels, side: MaxSide})
}

// RenderFit is Render with the picture at most width×height pixels,
// drawn at a lower density where it would be larger: for a document,
// which shows a diagram no larger than its text width and page height,
// so that pixels it would not show are neither drawn nor compressed.
// The height bound gives way at minFitScale pixels per point: a document
// shows a diagram taller than a page at half its size or more, over
// several pages, where that is 144 dpi.
func RenderFit(ctx context.Context, d Diagram, width, height int) ([]byte, error) {
	return renderWithin(ctx, d, canvasLimit{pixels: MaxPixels, side: MaxSide, width: width, height: height})
}

// minFitScale is the least density, in pixels per point, to which
// RenderFit's height bound lowers a picture.
const minFitScale = 1.0

// canvasLimit bounds the output image.
type canvasLimit struct {
	pixels, side int
	// width and height, when not zero, bound each side by itself.
	width, height int
}

// renderWithin is Render with the output bounded by lim.
func renderWithin(ctx context.Context, d Diagram, lim canvasLimit) ([]byte, error) {
	t, aspect, err := d.check()
	if err != nil {
		return nil, err
	}
	span, err := scanGraph(d.Source)
	if err != nil {
		return nil, err
	}
	src := withDefaults(d.Source, span, defaultStatements(t))
	sc, err := layout(ctx, src, t, aspect)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return draw(sc, t, aspect, lim)
}

// check validates the options and returns the theme and aspect to use.
func (d Diagram) check() (*theme, string, error) {
	switch strings.ToLower(strings.TrimSpace(d.Language)) {
	case "", LanguageDOT, "graphviz":
	default:
		return nil, "", render.Errorf("unsupported diagram language %q; supported: %q (Graphviz DOT)", d.Language, LanguageDOT)
	}
	var t *theme
	switch d.Theme {
	case "", render.ThemeLight:
		t = &lightTheme
	case render.ThemeDark:
		t = &darkTheme
	default:
		return nil, "", render.Errorf("unknown theme %q; use %q or %q", d.Theme, render.ThemeLight, render.ThemeDark)
	}
	aspect := d.Aspect
	switch aspect {
	case "":
		aspect = render.AspectLandscape
	case render.AspectLandscape, render.AspectPortrait, render.AspectSquare:
	default:
		return nil, "", render.Errorf("unknown aspect %q; use %q, %q or %q", d.Aspect, render.AspectLandscape, render.AspectPortrait, render.AspectSquare)
	}
	if strings.TrimSpace(d.Source) == "" {
		return nil, "", render.Errorf("the diagram source is empty")
	}
	if len(d.Source) > MaxSourceBytes {
		return nil, "", render.Errorf("the diagram source is %d bytes; at most %d are allowed", len(d.Source), MaxSourceBytes)
	}
	if strings.IndexByte(d.Source, 0) >= 0 {
		return nil, "", render.Errorf("the diagram source contains a NUL byte")
	}
	return t, aspect, nil
}

// frame places a scene on the canvas: the canvas size in pixels, the
// pixels per point, and the canvas position of Graphviz's origin.
type frame struct {
	w, h       int
	scale      float64
	offX, offY float64
}

// frameFor sizes the canvas for sc: the drawing and its margin at Scale,
// or at a lower density when that would exceed lim. The drawing is
// centred, which matters only on a square canvas.
func frameFor(sc *scene, aspect string, lim canvasLimit) (frame, error) {
	wPt := sc.bounds.width() + 2*margin
	hPt := sc.bounds.height() + 2*margin
	if aspect == render.AspectSquare {
		wPt = max(wPt, hPt)
		hPt = wPt
	}
	scale := Scale
	if wPt*hPt*scale*scale > float64(lim.pixels) {
		scale = math.Sqrt(float64(lim.pixels) / (wPt * hPt))
	}
	if m := max(wPt, hPt) * scale; m > float64(lim.side) {
		scale *= float64(lim.side) / m
	}
	if lim.width > 0 && wPt*scale > float64(lim.width) {
		scale = float64(lim.width) / wPt
	}
	if lim.height > 0 && hPt*scale > float64(lim.height) {
		// Not below minFitScale: a picture taller than a page is shown
		// at least at half its size, over several pages.
		scale = min(scale, max(float64(lim.height)/hPt, minFitScale))
	}
	f := frame{
		w:     max(1, int(math.Floor(wPt*scale))),
		h:     max(1, int(math.Floor(hPt*scale))),
		scale: scale,
	}
	if f.w > lim.side || f.h > lim.side || f.w*f.h > lim.pixels {
		return f, fmt.Errorf("diagram canvas %dx%d over the limit", f.w, f.h)
	}
	f.offX = (float64(f.w)-sc.bounds.width()*scale)/2 - sc.bounds.minX*scale
	f.offY = (float64(f.h)+sc.bounds.height()*scale)/2 + sc.bounds.minY*scale
	return f, nil
}

// draw paints a laid-out scene and encodes it.
func draw(sc *scene, t *theme, aspect string, lim canvasLimit) ([]byte, error) {
	if err := loadFonts(); err != nil {
		return nil, err
	}
	f, err := frameFor(sc, aspect, lim)
	if err != nil {
		return nil, err
	}
	dc := gg.NewContext(f.w, f.h)
	bg, opaque := backgroundColor(sc.background)
	if opaque {
		dc.SetColor(bg)
		dc.Clear()
	}
	halo := parseColor(t.background)
	if opaque {
		halo = bg
	}
	halo.A = 0xE0
	p := &painter{dc: dc, scale: f.scale, offX: f.offX, offY: f.offY, halo: halo}
	for _, layer := range [][][]op{sc.clusters, sc.edges, sc.nodes} {
		for _, ops := range layer {
			p.run(ops, false)
		}
	}
	for _, ops := range sc.edgeLabels {
		p.run(ops, true)
	}
	p.run(sc.graphLabel, false)
	img, ok := dc.Image().(*image.RGBA)
	if !ok {
		return nil, fmt.Errorf("diagram canvas is %T, not *image.RGBA", dc.Image())
	}
	return encodePNG(img, f.scale)
}
