package pdf

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark/ast"
)

// Page geometry, in points.
const (
	mm           = 72 / 25.4
	marginSide   = 22 * mm
	marginTop    = 22 * mm
	marginBottom = 24 * mm
	footerLine   = 14 * mm // footer baseline, from the page's bottom edge
)

// Type sizes and spacing, in points.
const (
	bodySize    = 10.5
	bodyLeading = 1.4 // line height as a multiple of the type size
	paraGap     = 7   // space between paragraphs
	smallSize   = 9   // captions, footers, notes
	codeSize    = 8.8
	codeLeading = 1.4
	tableSize   = 9.5
)

// Colours.
var (
	inkColor     = rgb{31, 35, 40}
	headingColor = rgb{21, 46, 74}
	mutedColor   = rgb{96, 104, 114}
	linkColor    = rgb{22, 90, 170}
	ruleColor    = rgb{200, 207, 215}
	codeFill     = rgb{243, 245, 247}
	codeInline   = rgb{236, 239, 242}
	headerFill   = rgb{230, 237, 245}
	quoteBar     = rgb{160, 178, 199}
	quoteInk     = rgb{70, 78, 90}
	ruleDark     = rgb{120, 134, 150}
)

var bodyStyle = style{face: regular, size: bodySize, color: inkColor}

// renderer lays one Document out. It is used once and is not safe for
// concurrent use.
type renderer struct {
	ctx context.Context
	doc Document
	src []byte
	m   *metrics
	pdf *fpdf.Fpdf

	pageW, pageH float64
	top, bottom  float64 // the text area's vertical extent
	x0, x1       float64 // the current column, narrowed by lists and quotes
	y            float64 // where the next block starts
	pending      float64 // space owed before the next block

	added    [faceCount]bool
	addedFB  map[uint8]bool
	font     face
	fontFB   uint8
	fontSize float64
	color    rgb
	fill     rgb

	shapedRuns *[]shapedRun // when set, runs drawn as outlines are recorded

	embedded []string
	images   map[string]*placedImage
	outline  int // level of the last bookmark, -1 before the first

	listDepth  int
	quoteDepth int
	marker     *frag       // a list item's marker, drawn by the item's first block
	markerElem *structElem // the Lbl element the marker is drawn under

	tags         *tagger
	afterHeading bool // the next block follows a heading's own spacing

	floats        []floatFigure   // figures waiting for the next page
	placingFloats bool            // placeFloats is drawing them
	floatsEnd     map[int]float64 // by page: where its text starts under floated figures
	afterFloats   float64         // where the text starts under this page's floated figures, -1: none
}

func newRenderer(ctx context.Context, d Document, src []byte) *renderer {
	size := fpdf.SizeType{Wd: 595.28, Ht: 841.89}
	if d.PageSize == Letter {
		size = fpdf.SizeType{Wd: 612, Ht: 792}
	}
	p := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "pt", Size: size})
	r := &renderer{
		ctx: ctx, doc: d, src: src, m: loadMetrics(), pdf: p,
		pageW: size.Wd, pageH: size.Ht,
		top: marginTop, bottom: size.Ht - marginBottom,
		x0: marginSide, x1: size.Wd - marginSide,
		fontSize: -1, color: rgb{-1, -1, -1}, fill: rgb{-1, -1, -1},
		images: map[string]*placedImage{}, outline: -1,
		tags: newTagger(),
	}
	created := d.Created
	if created.IsZero() {
		created = fixedDate
	}
	p.SetCreationDate(created)
	p.SetModificationDate(created)
	p.SetCatalogSort(true)
	p.SetCompression(true)
	p.SetProducer("Switchyard", true)
	p.SetCreator("Switchyard", true)
	p.SetTitle(metaText(d.Title), true)
	lang := d.lang()
	p.SetLang(lang)
	p.SetXmpMetadata(xmpPacket(metaText(d.Title), lang, created))
	p.SetMargins(marginSide, marginTop, marginSide)
	p.SetAutoPageBreak(false, marginBottom)
	p.SetDisplayMode("fullwidth", "OneColumn")
	return r
}

// run lays out the whole document.
func (r *renderer) run(tree ast.Node) error {
	if err := r.newPage(); err != nil {
		return err
	}
	r.titleBlock()
	if err := r.blocks(tree); err != nil {
		return err
	}
	if err := r.flushFloats(); err != nil {
		return err
	}
	r.footers()
	r.flushMark()
	return r.pdf.Error()
}

func (r *renderer) newPage() error {
	if r.pdf.PageCount() >= MaxPages {
		return errTooLong
	}
	r.flushMark()
	r.pdf.AddPage()
	r.y = r.top
	r.pending = 0
	r.afterFloats = -1
	// fpdf resets the font of a new page; make the next setFont emit.
	r.fontSize, r.color, r.fill = -1, rgb{-1, -1, -1}, rgb{-1, -1, -1}
	if err := r.pdf.Error(); err != nil {
		return err
	}
	return r.placeFloats()
}

// atTop reports whether nothing has been placed on the page yet.
func (r *renderer) atTop() bool { return r.y <= r.top+0.01 }

// space asks for at least pt points before the next block; gaps do not add
// up and vanish at the top of a page.
func (r *renderer) space(pt float64) {
	if !r.afterHeading {
		r.pending = max(r.pending, pt)
	}
}

// begin starts a block that needs need points to begin with: it pays the
// pending space, or moves to a new page when need does not fit.
func (r *renderer) begin(need float64) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if !r.atTop() && r.y+r.pending+need > r.bottom+0.01 {
		// A new page, and the block still opens with its list marker.
		owed := r.pending
		if err := r.newPage(); err != nil {
			return err
		}
		// Owed only under figures floated to the new page's top.
		r.pending = owed
	}
	if !r.atTop() {
		gap := r.pending
		if r.y == r.afterFloats {
			// The space under floated figures is part of the gap.
			gap = max(0, gap-figureGap)
		}
		r.y += gap
	}
	r.pending = 0
	r.afterHeading = false
	if m := r.marker; m != nil {
		r.marker = nil
		lh := r.lineHeight()
		r.tags.within(r.markerElem, func() {
			r.drawLine(line{frags: []frag{*m}, w: m.w}, 0, r.y, lh)
		})
	}
	return nil
}

// room is the height left on the page.
func (r *renderer) room() float64 { return r.bottom - r.y }

func (r *renderer) setFont(fc face, size float64) { r.setStyleFont(style{face: fc, size: size}) }

// setStyleFont selects st's font: its face, or the fallback it names.
func (r *renderer) setStyleFont(st style) {
	if st.fb != 0 {
		r.addFallback(st.fb)
		if st.fb != r.fontFB || st.size != r.fontSize {
			r.pdf.SetFont(fallbackFamily(st.fb), "", st.size)
			r.fontFB, r.fontSize = st.fb, st.size
		}
		return
	}
	fc, size := st.face, st.size
	if !r.added[fc] {
		// A copy: the released fpdf writes into a monospaced font's
		// bytes while it subsets them (third_party/fpdf does not, but a
		// build that ignores its replace gets the release), and the
		// originals are shared. fpdf finds a face it parsed for an
		// earlier document by the bytes, not the slice.
		r.pdf.AddUTF8FontFromBytes(fc.family(), fc.style(), bytes.Clone(fc.ttf()))
		r.added[fc] = true
	}
	if fc != r.font || r.fontFB != 0 || size != r.fontSize {
		r.pdf.SetFont(fc.family(), fc.style(), size)
		r.font, r.fontFB, r.fontSize = fc, 0, size
	}
}

func (r *renderer) setColor(c rgb) {
	if c != r.color {
		r.pdf.SetTextColor(c.r, c.g, c.b)
		r.color = c
	}
}

func (r *renderer) setFill(c rgb) {
	if c != r.fill {
		r.pdf.SetFillColor(c.r, c.g, c.b)
		r.fill = c
	}
}

// rule draws a horizontal line, an artifact unless it is part of text (a
// strikethrough).
func (r *renderer) rule(x0, x1, y, width float64, c rgb) {
	opened := r.openArtifact("")
	r.pdf.SetDrawColor(c.r, c.g, c.b)
	r.pdf.SetLineWidth(width)
	r.pdf.Line(x0, y, x1, y)
	r.closeMark(opened)
}

// tint fills a rectangle behind text as an artifact.
func (r *renderer) tint(x, y, w, h float64, c rgb) {
	opened := r.openArtifact("")
	r.setFill(c)
	r.pdf.Rect(x, y, w, h, "F")
	r.closeMark(opened)
}

// drawLine draws l with its top at top in a line box lh high, starting at
// x (alignment is the caller's), as content of the current structure
// element.
func (r *renderer) drawLine(l line, x, top, lh float64) {
	// A line with a link is marked a fragment at a time, so that the
	// link's text can sit in a Link element beside its annotation.
	perFrag := r.tags.taggable() && hasLink(l)
	opened := false
	if !perFrag {
		opened = r.openContent()
	}
	l, _ = r.m.visual(l)
	var link *structElem
	lastLink := ""
	for _, f := range l.frags {
		if f.text == "" {
			continue
		}
		if perFrag {
			e := r.tags.cur
			if f.st.link != "" {
				if f.st.link != lastLink || link == nil {
					link = r.tags.add(r.tags.cur, "Link")
				}
				link.text += f.text
				e = link
			}
			lastLink = f.st.link
			opened = r.openContentFor(e)
		}
		fx := x + f.x
		size := f.st.size
		baseline := top + lh/2 + 0.34*size
		if f.st.code {
			r.setFill(codeInline)
			r.pdf.Rect(fx-1.5, baseline-size*0.86, f.w+3, size*1.16, "F")
		}
		r.setStyleFont(f.st)
		r.setColor(f.st.color)
		if !r.m.outlined(f.st, f.text) || !r.drawOutlined(f, fx, baseline) {
			r.pdf.Text(fx, baseline, bmpOnly(f.text))
		}
		if f.st.strike {
			r.rule(fx, fx+f.w, baseline-size*0.3, size*0.06, f.st.color)
		}
		if f.st.link != "" {
			r.pdf.LinkString(fx, top, f.w, lh, f.st.link)
			var owner *structElem
			if perFrag {
				owner = link
			}
			r.tags.annotation(r.pdf.PageNo(), owner)
		}
		if perFrag {
			r.closeMark(opened)
		}
	}
	if !perFrag {
		r.closeMark(opened)
	}
}

func hasLink(l line) bool {
	for _, f := range l.frags {
		if f.st.link != "" && f.text != "" {
			return true
		}
	}
	return false
}

// lines places laid-out lines from the current position, lh apart,
// breaking pages as needed and never leaving a paragraph's first or last
// line alone on a page. align is 'L', 'C' or 'R'.
func (r *renderer) lines(ls []line, lh float64, align byte) error {
	for i := 0; i < len(ls); i++ {
		left := len(ls) - i
		fit := int((r.room() + 0.01) / lh)
		if !r.atTop() && (fit < 1 ||
			fit == 1 && i == 0 && left > 1 || // a first line alone at the foot
			fit == 1 && i >= 2 && left == 2) { // a last line alone at the head
			if err := r.newPage(); err != nil {
				return err
			}
		}
		if i > 0 && i%50 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		x := r.x0
		if _, rtl := r.m.visual(ls[i]); rtl && align == 'L' {
			align = 'R' // a right-to-left paragraph
		}
		switch align {
		case 'C':
			x += (r.x1 - r.x0 - ls[i].w) / 2
		case 'R':
			x = r.x1 - ls[i].w
		}
		r.drawLine(ls[i], x, r.y, lh)
		r.y += lh
	}
	return nil
}

// maxTitleLines is the most lines the title block gives a title.
const maxTitleLines = 3

// titleBlock opens the first page with the title and the date.
func (r *renderer) titleBlock() {
	title := strings.TrimSpace(r.m.clean(r.doc.Title, false))
	if title == "" && r.doc.Created.IsZero() {
		return
	}
	if title != "" {
		st := style{face: bold, size: 24, color: headingColor}
		ls := r.m.breakLines([]span{{title, st}}, r.x1-r.x0)
		if len(ls) > maxTitleLines {
			ls = ls[:maxTitleLines]
			last := &ls[maxTitleLines-1]
			ell := r.m.width(st.face, st.size, "…")
			last.frags = append(last.frags, frag{text: "…", st: st, x: last.w, w: ell})
		}
		h := r.tags.open("H1")
		for _, l := range ls {
			r.drawLine(l, r.x0, r.y, 24*1.2)
			r.y += 24 * 1.2
		}
		r.tags.close(h)
	}
	if !r.doc.Created.IsZero() {
		r.y += 2
		st := style{face: regular, size: 10.5, color: mutedColor}
		p := r.tags.open("P")
		defer r.tags.close(p)
		r.drawLine(merge([]item{{text: formatDate(r.doc.Created), st: st, w: r.m.width(regular, 10.5, formatDate(r.doc.Created))}}), r.x0, r.y, 14)
		r.y += 14
	}
	r.y += 8
	r.rule(r.x0, r.x1, r.y, 1.2, headingColor)
	r.y += 1.2
	r.space(18)
}

func formatDate(t time.Time) string {
	return strconv.Itoa(t.Day()) + " " + t.Month().String() + " " + strconv.Itoa(t.Year())
}

// footers writes "title … page / pages" at the foot of every page. It
// runs last, when the page count is known, and ends on the last page.
func (r *renderer) footers() {
	n := r.pdf.PageCount()
	title := strings.TrimSpace(r.m.clean(r.doc.Title, false))
	r.flushMark()
	for p := 1; p <= n; p++ {
		r.pdf.SetPage(p)
		r.font, r.fontSize, r.color = 0, -1, rgb{-1, -1, -1}
		r.artifactOf("/Type /Pagination /Subtype /Footer", func() { r.footer(p, n, title) })
	}
}

// footer draws the footer of page p of n.
func (r *renderer) footer(p, n int, title string) {
	y := r.pageH - footerLine
	r.rule(marginSide, r.pageW-marginSide, y-11, 0.4, ruleColor)
	num := fmt.Sprintf("%d / %d", p, n)
	numW := r.m.width(regular, smallSize, num)
	st := style{face: regular, size: smallSize, color: mutedColor}
	if title != "" {
		ls := r.m.breakLines([]span{{title, st}}, r.pageW-2*marginSide-numW-24)
		l := ls[0]
		if len(ls) > 1 {
			l = r.m.breakLines([]span{{ellipsize(r.m, title, st, r.pageW-2*marginSide-numW-24), st}}, 1e6)[0]
		}
		r.drawLine(l, marginSide, y-8, 10)
	}
	r.drawLine(line{frags: []frag{{text: num, st: st, w: numW}}, w: numW}, r.pageW-marginSide-numW, y-8, 10)
}

// ellipsize shortens s with "…" to fit width.
func ellipsize(m *metrics, s string, st style, width float64) string {
	rs := []rune(s)
	rs = rs[:min(len(rs), 300)] // far more than any line holds
	for len(rs) > 0 && m.width(st.face, st.size, string(rs)+"…") > width {
		rs = rs[:len(rs)-1]
	}
	return string(rs) + "…"
}
