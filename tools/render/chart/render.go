package chart

import (
	"context"
	"image"
	"image/color"
	stddraw "image/draw"
	"math"
	"sync"

	"git.sr.ht/~sbinet/gg"

	"github.com/switchyardhq/switchyard/tools/render"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The picture is drawn at 2× density: lengths below are in points of a
// 96 dpi layout (600×375 pt for landscape) and land on a 192 dpi bitmap,
// so 1600×1000 pixels with text as crisp as on a high-density screen.
const dpi = 192

// Sizes of the layout, in points.
const (
	margin        = 18
	titleSize     = 14
	axisTitleSize = 9.5
	tickSize      = 8.5
	legendSize    = 9
)

// pixels returns the picture's size for an aspect.
func pixels(aspect string) (w, h int) {
	switch aspect {
	case render.AspectPortrait:
		return 1000, 1500
	case render.AspectSquare:
		return 1200, 1200
	}
	return 1600, 1000
}

// Render draws the chart s, titled title, and returns it as a PNG. It
// checks s as Parse does (the error is then a *render.SourceError) and
// stops early with ctx's error when ctx ends.
func Render(ctx context.Context, title string, s Spec) ([]byte, error) {
	return RenderScaled(ctx, title, s, 1)
}

// EmbedScale is the scale at which a chart folded into a document is
// drawn: a document shows a chart at most at its text width (about
// 470 pt on A4), where 1600 pixels are 245 dpi, more than paper or a
// screen at 100 % shows and a sixth of the document's time to draw and
// compress. At this scale a chart is 1000×625 pixels, about 150 dpi at
// the text width, with the same layout.
const EmbedScale = 0.625

// RenderScaled is Render with scale times Render's pixels in each
// direction (at most 1, at least 0.25): the same layout, in points, at a
// lower density.
func RenderScaled(ctx context.Context, title string, s Spec, scale float64) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scale = min(1, max(0.25, scale))
	th := themeFor(s.Theme)
	wpx, hpx := pixels(s.Aspect)
	wpx, hpx = int(math.Round(float64(wpx)*scale)), int(math.Round(float64(hpx)*scale))
	img := newCanvas(wpx, hpx, dpi*scale, th.background)
	defer bitmaps.put(img.Image().(*image.RGBA))
	c := draw.New(img)
	area := c.Rectangle
	area.Min.X += margin
	area.Max.X -= margin
	area.Min.Y += margin
	area.Max.Y -= margin

	area = drawTitle(c, th, clean(title), area)
	var err error
	if s.Type == TypePie {
		err = drawPie(ctx, c, th, &s, area)
	} else {
		if showLegend(&s) {
			area = drawLegend(c, th, legendEntries(&s, th), area)
		}
		err = drawCartesian(ctx, c, th, &s, area)
	}
	if err != nil {
		return nil, err
	}

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The canvas is an *image.RGBA over an opaque background.
	return encodePNG(img.Image().(*image.RGBA))
}

// newCanvas is vgimg's canvas of w×h pixels at dpi on bg, drawn on one
// bitmap: vgimg.NewWith gives gg a copy of the bitmap it made (a second
// 6.4 MB allocation and copy for each chart), and paints it white first.
func newCanvas(w, h int, dpi float64, bg color.Color) *vgimg.Canvas {
	rgba := bitmaps.get(w, h)
	ctx := gg.NewContextForRGBA(rgba)
	// What vgimg.NewWith does to the context it makes.
	ctx.SetLineCapButt()
	ctx.InvertY()
	ctx.SetInterpolator(interp)
	c := vgimg.NewWith(vgimg.UseImageWithContext(rgba, ctx), vgimg.UseDPI(int(math.Round(dpi))))
	// NewWith has painted every pixel white, the light theme's background.
	if r, g, b, a := bg.RGBA(); r&g&b&a != 0xffff {
		stddraw.Draw(rgba, rgba.Bounds(), image.NewUniform(bg), image.Point{}, stddraw.Src)
	}
	return c
}

// bitmaps keeps chart bitmaps between renders, by size. A canvas paints
// every pixel of its bitmap before drawing, so a used one serves as well
// as a new one and spares allocating and clearing 6.4 MB a chart.
var bitmaps bitmapPool

type bitmapPool struct{ bySize sync.Map } // image.Point → *sync.Pool of *image.RGBA

func (p *bitmapPool) get(w, h int) *image.RGBA {
	if pool, ok := p.bySize.Load(image.Pt(w, h)); ok {
		if img, ok := pool.(*sync.Pool).Get().(*image.RGBA); ok {
			return img
		}
	}
	return image.NewRGBA(image.Rect(0, 0, w, h))
}

// put gives img back once nothing refers to it any more.
func (p *bitmapPool) put(img *image.RGBA) {
	pool, _ := p.bySize.LoadOrStore(img.Bounds().Size(), new(sync.Pool))
	pool.(*sync.Pool).Put(img)
}

// drawTitle draws the title at the top left of area and returns what is
// left below it.
func drawTitle(c draw.Canvas, th *theme, title string, area vg.Rectangle) vg.Rectangle {
	if title == "" {
		return area
	}
	sty := textStyle(titleSize, true, th.title)
	title = fit(title, sty, area.Max.X-area.Min.X)
	sty.YAlign = draw.YTop
	c.FillText(sty, vg.Point{X: area.Min.X, Y: area.Max.Y}, title)
	area.Max.Y -= sty.Height(title) + 8
	return area
}
