package pdf

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // accepted for embedded elements
	_ "image/jpeg"
	"image/png"
	"slices"
	"strings"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark/ast"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/markdown"
)

// placedImage is an element registered with the PDF, once however often
// the document shows it.
type placedImage struct {
	w, h int // pixels
	// ppi is the density the image records (a PNG's pHYs), pixels per
	// inch; 0 when it records none.
	ppi float64
}

// Figure layout, in points.
const (
	figureGap     = 10 // space around a figure
	captionGap    = 6  // between the picture and its caption
	captionSize   = smallSize
	captionLH     = captionSize * 1.35
	screenDPI     = 96 // an image is never drawn larger than at this density
	captionWidthF = 0.86
	// minShrink is the least fraction of its own size at which a
	// picture is drawn (render.MinReadableScale).
	minShrink = render.MinReadableScale
	// maxFigurePages bounds the pages one picture goes on over.
	maxFigurePages = 4
	// sliceStart is the least room, as a fraction of the text height,
	// in which a picture taller than a page starts under text; with less
	// it starts on the next page.
	sliceStart = 1.0 / 3
)

// element returns the registered image for id, registering it on first
// use. An unknown id or an unreadable image is a *render.SourceError.
func (r *renderer) element(id string) (*placedImage, error) {
	if pi, ok := r.images[id]; ok {
		return pi, nil
	}
	el, ok := r.doc.Elements[id]
	if !ok {
		return nil, r.unknownID(id)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(el.PNG))
	if err != nil {
		return nil, render.Errorf("%s is not a PNG, JPEG or GIF image, so it cannot be embedded", id)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxImagePixels {
		return nil, render.Errorf("%s is %d×%d pixels; images of up to %d pixels can be embedded", id, cfg.Width, cfg.Height, MaxImagePixels)
	}
	data, kind := el.PNG, format
	switch {
	case format == "png" && pngPassesThrough(data):
	case format == "jpeg" && jpegPassesThrough(cfg):
		kind = "jpg"
	default:
		// fpdf cannot take it as it is (alpha, interlacing, GIF): flatten
		// it onto the white page and store it as an opaque PNG.
		if data, err = flatten(el.PNG); err != nil {
			return nil, render.Errorf("%s could not be decoded as an image: %v", id, err)
		}
		kind = "png"
	}
	if err := r.register(id, kind, data); err != nil {
		return nil, err
	}
	pi := &placedImage{w: cfg.Width, h: cfg.Height}
	if format == "png" {
		pi.ppi = render.PNGDensity(el.PNG)
	}
	r.images[id] = pi
	return pi, nil
}

// register hands an image to fpdf, turning a panic of its parsers into an
// error, as the bytes come from outside.
func (r *renderer) register(name, kind string, data []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = render.Errorf("%s could not be embedded: the image data is damaged", name)
		}
	}()
	info := r.pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: kind}, bytes.NewReader(data))
	if e := r.pdf.Error(); e != nil {
		return fmt.Errorf("embedding %s: %w", name, e)
	}
	return orderImage(info, len(r.images))
}

// orderImage makes the place of an image in the file deterministic. fpdf
// writes image objects sorted by pixel width alone, so images of equal
// width (charts usually are) would come out in map order, different on
// every run. Adding a millionth of a pixel per registration breaks the
// tie in order of first use; fpdf writes the width as an integer, so the
// file shows nothing of it. The image is rewritten through its public
// GobEncode and GobDecode, the only way fpdf offers to change one.
func orderImage(info *fpdf.ImageInfoType, n int) error {
	if n == 0 {
		return nil
	}
	enc, err := info.GobEncode()
	if err != nil {
		return fmt.Errorf("ordering image: %w", err)
	}
	var (
		data, smask, pal []byte
		nn, bpc          int
		w, h             float64
		cs, f, dp        string
		trns             []int
		scale, dpi       float64
	)
	dec := gob.NewDecoder(bytes.NewReader(enc))
	for _, v := range []any{&data, &smask, &nn, &w, &h, &cs, &pal, &bpc, &f, &dp, &trns, &scale, &dpi} {
		if err := dec.Decode(v); err != nil {
			return fmt.Errorf("ordering image: %w", err)
		}
	}
	w += float64(n) * 1e-6
	var out bytes.Buffer
	ge := gob.NewEncoder(&out)
	for _, v := range []any{data, smask, nn, w, h, cs, pal, bpc, f, dp, trns, scale, dpi} {
		if err := ge.Encode(v); err != nil {
			return fmt.Errorf("ordering image: %w", err)
		}
	}
	return info.GobDecode(out.Bytes())
}

func (r *renderer) unknownID(id string) error {
	ids := make([]string, 0, len(r.doc.Elements))
	for k := range r.doc.Elements {
		ids = append(ids, k)
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return render.Errorf("the Markdown embeds %s, but there is no chart, diagram or image to embed: create one first or remove ![...](%s)", id, id)
	}
	return render.Errorf("the Markdown embeds %s, which is not an object of this conversation; the objects it can embed are: %s", id, strings.Join(ids, ", "))
}

// pngPassesThrough reports whether fpdf can copy data's compressed pixels
// straight into the PDF: well-formed chunks with intact checksums, no
// interlacing, no transparency (which fpdf would have to unpack), and no
// empty chunk before the pixels (fpdf's reader stops at one).
func pngPassesThrough(data []byte) bool {
	const sig = "\x89PNG\r\n\x1a\n"
	if len(data) < len(sig)+25 || string(data[:len(sig)]) != sig {
		return false
	}
	rest := data[len(sig):]
	sawIDAT, sawPLTE := false, false
	var colorType byte
	for first := true; ; first = false {
		if len(rest) < 12 {
			return false
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n)+12 > uint64(len(rest)) {
			return false
		}
		kind := string(rest[4:8])
		body := rest[8 : 8+n]
		if crc32.ChecksumIEEE(rest[4:8+n]) != binary.BigEndian.Uint32(rest[8+n:]) {
			return false
		}
		switch {
		case first:
			if kind != "IHDR" || n != 13 || body[12] != 0 { // interlace method
				return false
			}
			colorType = body[9]
			if colorType == 4 || colorType == 6 || body[8] > 8 {
				return false
			}
		case kind == "IEND":
			return sawIDAT && (colorType != 3 || sawPLTE)
		case n == 0:
			return false
		case kind == "tRNS":
			return false
		case kind == "PLTE":
			sawPLTE = true
		case kind == "IDAT":
			sawIDAT = true
		}
		rest = rest[12+n:]
	}
}

// jpegPassesThrough reports whether fpdf embeds a JPEG of this colour
// model as it is.
func jpegPassesThrough(cfg image.Config) bool {
	switch cfg.ColorModel {
	case color.GrayModel, color.YCbCrModel, color.CMYKModel:
		return true
	}
	return false
}

// flatten decodes an image, paints it over white and encodes it as an
// opaque PNG.
func flatten(data []byte) ([]byte, error) {
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), src, b.Min, draw.Over)
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// figureLayout is where a figure's picture and caption go.
type figureLayout struct {
	w, h    float64
	caption []line
	// least is the narrowest the picture may be drawn and stay readable
	// (minShrink of its own size when it records its density), 0 when
	// that is not known.
	least float64
	// sliced is a picture taller than a page at its least size: it
	// starts in the room left when that is at least sliceStart of a page,
	// else on the next page, and goes on over the next pages.
	sliced bool
	page   float64 // the text area's height, for a sliced picture
}

func (r *renderer) layoutFigure(n *ast.Image, id string) (figureLayout, error) {
	pi, err := r.element(id)
	if err != nil {
		return figureLayout{}, err
	}
	avail := r.x1 - r.x0
	w := min(avail, float64(pi.w)*72/screenDPI)
	h := w * float64(pi.h) / float64(pi.w)
	caption := r.caption(n, id)
	var ls []line
	if caption != "" {
		st := style{face: italic, size: captionSize, color: mutedColor}
		ls = r.m.breakLines([]span{{caption, st}}, avail*captionWidthF)
	}
	capH := float64(len(ls)) * captionLH
	least := 0.0
	if pi.ppi > 0 {
		// Never larger than at screenDPI, and over at most
		// maxFigurePages pages, whatever density the image claims, even
		// when every cut but the last moves up by render.CutReach.
		page := r.bottom - r.top
		most := float64(maxFigurePages-1)*(1-render.CutReach)*page + page - capH - captionGap - 2
		least = min(minShrink*float64(pi.w)*72/pi.ppi, float64(pi.w)*72/screenDPI, avail)
		least = min(least, most*float64(pi.w)/float64(pi.h))
	}
	if maxH := r.bottom - r.top - capH - captionGap - 2; h > maxH {
		h = maxH
		w = h * float64(pi.w) / float64(pi.h)
		if w < least {
			w = least
			h = w * float64(pi.h) / float64(pi.w)
		}
	}
	return figureLayout{w: w, h: h, caption: ls, least: least, sliced: h > r.bottom-r.top-capH-captionGap-2, page: r.bottom - r.top}, nil
}

// captionHeight is the room the caption takes under the picture.
func (fl figureLayout) captionHeight() float64 {
	if len(fl.caption) == 0 {
		return 0
	}
	return captionGap + float64(len(fl.caption))*captionLH
}

// height is the room the figure needs where it starts: a sliced one a
// whole page, unless it starts in the room left under text.
func (fl figureLayout) height() float64 {
	if fl.sliced {
		return fl.page
	}
	return fl.h + fl.captionHeight()
}

// leastHeight is the least room the figure can be shrunk into
// (shrinkInto), its caption included.
func (fl figureLayout) leastHeight() float64 {
	if fl.sliced {
		return fl.page * sliceStart
	}
	h := shrinkFloor * fl.h
	if fl.least > 0 {
		h = max(h, fl.least*fl.h/fl.w)
	}
	return min(h, fl.h) + fl.captionHeight()
}

// shrinkInto scales the picture down to fit room, its caption under it,
// when that keeps it at shrinkFloor of its size or more and no narrower
// than it stays readable at; it reports whether it did.
func (fl *figureLayout) shrinkInto(room float64) bool {
	if fl.sliced || room < fl.leastHeight() {
		return false
	}
	if h := room - fl.captionHeight(); h < fl.h {
		fl.w, fl.h = fl.w*h/fl.h, h
	}
	return true
}

// figureHeight is the least height figure n can take where it starts,
// which a heading before it is kept with.
func (r *renderer) figureHeight(n *ast.Image, id string) (float64, error) {
	fl, err := r.layoutFigure(n, id)
	return fl.leastHeight(), err
}

// caption is the text under a figure: the Markdown's alt text, else the
// element's own caption.
func (r *renderer) caption(n *ast.Image, id string) string {
	c := strings.TrimSpace(r.m.clean(markdown.PlainText(n, r.src), false))
	if c == "" {
		c = strings.TrimSpace(r.m.clean(r.doc.Elements[id].Caption, false))
	}
	return c
}

// figure places an embedded image, centred at the text width with its
// caption under it. A figure that does not fit in the room left on the
// page is shrunk into it when it stays readable (shrinkInto); otherwise,
// outside lists and quotes, it floats to the top of the next page and the
// text after it fills this one (floats.go). In a list or a quote it
// starts the next page.
func (r *renderer) figure(n *ast.Image, id string) error {
	fl, err := r.layoutFigure(n, id)
	if err != nil {
		return err
	}
	r.space(figureGap)
	// A screen reader reads the alternative text in place of the picture:
	// the caption (the Markdown's, else the element's own); the id is
	// better than silence.
	alt := r.caption(n, id)
	if alt == "" {
		alt = "Image " + id
	}
	if !slices.Contains(r.embedded, id) {
		r.embedded = append(r.embedded, id)
	}
	need := 0.0 // what begin must find room for; 0: the figure's height
	if !r.atTop() {
		room := r.room() - r.pending
		floating := r.canFloat()
		switch {
		case floating && len(r.floats) > 0:
			// An earlier figure waits for the next page: this one may not
			// pass it.
			r.deferFigure(id, fl, alt)
			return nil
		case fl.sliced && room >= fl.leastHeight():
			// It goes on over pages anyway: it starts in the room left.
			need = room
		case fl.height() <= room+0.01:
		case fl.shrinkInto(room):
		case floating:
			r.deferFigure(id, fl, alt)
			return nil
		}
	}
	if need == 0 {
		need = fl.height()
	}
	fe := r.tags.open("Figure")
	defer r.tags.close(fe)
	fe.alt = alt
	if err := r.begin(need); err != nil {
		return err
	}
	if err := r.drawFigure(id, fl, fe); err != nil {
		return err
	}
	r.space(figureGap)
	return r.pdf.Error()
}

// drawFigure draws the picture and its caption from the current
// position, under element fe.
func (r *renderer) drawFigure(id string, fl figureLayout, fe *structElem) error {
	x := r.x0 + (r.x1-r.x0-fl.w)/2
	// Where the picture stands on its first page, in PDF coordinates, for
	// tools that reflow or highlight it.
	shown := min(fl.h, r.bottom-r.y)
	fe.attrs = fmt.Sprintf("<</O /Layout /BBox [%.2f %.2f %.2f %.2f]>>", x, r.pageH-r.y-shown, x+fl.w, r.pageH-r.y)
	if fl.sliced {
		if err := r.slices(id, x, fl); err != nil {
			return err
		}
	} else {
		r.content(func() {
			r.pdf.ImageOptions(id, x, r.y, fl.w, fl.h, false, fpdf.ImageOptions{}, 0, "")
		})
		r.y += fl.h
	}
	if len(fl.caption) > 0 {
		r.y += captionGap
		ce := r.tags.open("Caption")
		err := r.lines(fl.caption, captionLH, 'C')
		r.tags.close(ce)
		if err != nil {
			return err
		}
	}
	return r.pdf.Error()
}

// slices draws a picture taller than a page from the top of this page
// on, a page's height of it on each page, clipped, leaving room for the
// caption under the last part. Each cut is moved up into the nearest
// band of background above where the page ends (render.CutAbove), so that it
// runs between a diagram's nodes rather than through one.
func (r *renderer) slices(id string, x float64, fl figureLayout) error {
	capH := fl.captionHeight()
	ink := render.InkRows(r.doc.Elements[id].PNG)
	for done := 0.0; ; {
		part := min(fl.h-done, r.room())
		if fl.h-done <= r.room() && fl.h-done+capH > r.room() {
			// The rest fits but not with its caption: leave some of it for
			// the next page, so that the caption is not alone there.
			part = max(r.room()-capH, (fl.h-done)/2)
		}
		if done+part < fl.h-0.01 {
			part = render.CutAbove(ink, fl.h, done, part)
		}
		r.content(func() {
			r.pdf.ClipRect(x, r.y, fl.w, part, false)
			r.pdf.ImageOptions(id, x, r.y-done, fl.w, fl.h, false, fpdf.ImageOptions{}, 0, "")
			r.pdf.ClipEnd()
		})
		r.y += part
		done += part
		if done >= fl.h-0.01 {
			return r.pdf.Error()
		}
		if err := r.newPage(); err != nil {
			return err
		}
	}
}
