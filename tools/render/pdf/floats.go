package pdf

// A figure that neither fits in the room left on a page nor can be
// shrunk into it readably floats, as a typesetter would set it: the text
// after it fills the rest of the page, and the figure, caption and all,
// opens the next page (then the text goes on under it). Figures float in
// order; one never passes another, nor a heading when the page it
// leaves is at least half full (floatBarrier): a figure stays in its
// section unless that would leave a page mostly blank. In the structure tree a floated
// figure stays where the Markdown has it, so that a screen reader meets
// it in the order it was written.

// shrinkFloor is the least fraction of its size on a page of its own at
// which a figure is shrunk into the room left under text; below it the
// figure floats to the next page.
const shrinkFloor = 0.75

// floatFigure is a figure waiting for the next page.
type floatFigure struct {
	id     string
	fl     figureLayout
	elem   *structElem
	x0, x1 float64 // the column it was laid out for
}

// canFloat reports whether a figure here may wait for the next page:
// only outside lists and quotes, whose markers and bars belong to the
// text around the figure.
func (r *renderer) canFloat() bool {
	return r.listDepth == 0 && r.quoteDepth == 0
}

// deferFigure puts the figure in the queue for the next page, and its
// element in the structure tree here.
func (r *renderer) deferFigure(id string, fl figureLayout, alt string) {
	fe := r.tags.add(r.tags.cur, "Figure")
	fe.alt = alt
	r.floats = append(r.floats, floatFigure{id: id, fl: fl, elem: fe, x0: r.x0, x1: r.x1})
}

// placeFloats draws the waiting figures at the top of a new page, as
// many as fit, and moves the text position under them. It is called by
// newPage; a sliced figure's own page breaks place nothing.
func (r *renderer) placeFloats() error {
	if r.placingFloats || len(r.floats) == 0 {
		return nil
	}
	r.placingFloats = true
	defer func() { r.placingFloats = false }()
	for len(r.floats) > 0 {
		f := r.floats[0]
		if !r.atTop() && (f.fl.sliced || r.y+figureGap+f.fl.height() > r.bottom+0.01) {
			break
		}
		if !r.atTop() {
			r.y += figureGap
		}
		r.floats = r.floats[1:]
		x0, x1 := r.x0, r.x1
		r.x0, r.x1 = f.x0, f.x1
		var err error
		r.tags.within(f.elem, func() { err = r.drawFigure(f.id, f.fl, f.elem) })
		r.x0, r.x1 = x0, x1
		if err != nil {
			return err
		}
	}
	r.flushMark()
	r.y += figureGap
	r.afterFloats = r.y
	if r.floatsEnd == nil {
		r.floatsEnd = map[int]float64{}
	}
	r.floatsEnd[r.pdf.PageNo()] = r.y
	return r.pdf.Error()
}

// floatBarrier places the waiting figures before a heading, on the
// next page, unless the text before the heading fills less than half of
// this one.
func (r *renderer) floatBarrier() error {
	if len(r.floats) == 0 || r.y-r.pageTop(r.pdf.PageNo()) < (r.bottom-r.top)/2 {
		return nil
	}
	return r.newPage()
}

// flushFloats places the figures still waiting when the text has ended,
// on pages of their own.
func (r *renderer) flushFloats() error {
	for len(r.floats) > 0 {
		if err := r.newPage(); err != nil {
			return err
		}
	}
	return nil
}

// pageTop is where the text of page p starts: under the figures that
// floated to its top.
func (r *renderer) pageTop(p int) float64 {
	if y, ok := r.floatsEnd[p]; ok {
		return y
	}
	return r.top
}
