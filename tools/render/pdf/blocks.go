package pdf

import (
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
	"github.com/switchyardhq/switchyard/tools/render/markdown"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// headingStyle is the type size and spacing of each heading level.
type headingStyle struct {
	size, before, after float64
	face                face
}

var headingStyles = [...]headingStyle{
	1: {20, 22, 8, bold},
	2: {16, 18, 6, bold},
	3: {13, 14, 4, bold},
	4: {11.5, 12, 3, bold},
	5: {10.5, 10, 2, boldItalic},
	6: {10.5, 10, 2, boldItalic},
}

const (
	itemGap    = 3  // between items of a tight list
	listIndent = 18 // indent of a list's text from its marker column
	quoteInset = 16 // indent of a block quote's text
	codePad    = 7  // padding inside a code panel
	ruleGap    = 12 // space around a thematic break
	headingLH  = 1.25
)

// blocks lays out the block children of n in order.
func (r *renderer) blocks(n ast.Node) error {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := r.block(c); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) block(n ast.Node) error {
	switch n := n.(type) {
	case *ast.Heading:
		return r.heading(n)
	case *ast.Paragraph:
		r.space(paraGap)
		return r.paragraph(n)
	case *ast.TextBlock:
		r.space(itemGap)
		return r.paragraph(n)
	case *ast.List:
		return r.list(n)
	case *ast.Blockquote:
		return r.quote(n)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.code(n)
	case *ast.ThematicBreak:
		return r.thematicBreak()
	case *east.Table:
		return r.table(n)
	case *ast.HTMLBlock:
		return nil
	default:
		return r.blocks(n)
	}
}

// minColumn is the narrowest the text column gets however deep lists and
// quotes nest: deeper levels stop indenting.
const minColumn = 160

// indent returns x0 moved right by by, as far as minColumn allows.
func (r *renderer) indent(x0, by float64) float64 {
	return max(x0, min(x0+by, r.x1-minColumn))
}

// indentRight is indent from the right margin x1.
func (r *renderer) indentRight(x1, by float64) float64 {
	return min(x1, max(x1-by, r.x0+minColumn))
}

// body is the style of running text in the current block.
func (r *renderer) body() style {
	st := bodyStyle
	if r.quoteDepth > 0 {
		st.color = quoteInk
	}
	return st
}

func (r *renderer) lineHeight() float64 { return bodySize * bodyLeading }

func (r *renderer) heading(n *ast.Heading) error {
	if err := r.floatBarrier(); err != nil {
		return err
	}
	hs := headingStyles[min(max(n.Level, 1), 6)]
	st := style{face: hs.face, size: hs.size, color: headingColor}
	ls := r.m.breakLines(r.spans(n, st), r.x1-r.x0)
	lh := hs.size * headingLH
	h := float64(len(ls)) * lh
	if r.afterHeading {
		// A heading straight under another: closer, but apart.
		r.afterHeading = false
		r.space(hs.before * 0.4)
	} else {
		r.space(hs.before)
	}
	// Keep the heading with the start of what follows it.
	if err := r.begin(h + hs.after + r.leadIn(n.NextSibling())); err != nil {
		return err
	}
	top := r.y
	he := r.tags.open("H" + strconv.Itoa(min(max(n.Level, 1), 6)))
	err := r.lines(ls, lh, 'L')
	r.tags.close(he)
	if err != nil {
		return err
	}
	if n.Level <= 3 {
		r.bookmark(markdown.PlainText(n, r.src), n.Level-1, top)
	}
	r.y += hs.after
	r.pending = 0
	r.afterHeading = true
	return nil
}

// bookmark adds an outline entry; levels never skip one, as PDF viewers
// need a parent for every child.
func (r *renderer) bookmark(title string, level int, y float64) {
	title = metaText(title)
	if title == "" {
		return
	}
	level = min(level, r.outline+1)
	r.outline = level
	r.setFont(regular, bodySize) // fpdf encodes the title by the current font
	r.pdf.Bookmark(title, level, y)
}

// leadIn is the height the start of block n needs on a page: what a
// heading before it must be kept with.
func (r *renderer) leadIn(n ast.Node) float64 {
	lh := r.lineHeight()
	switch n := n.(type) {
	case nil:
		return 0
	case *ast.Paragraph, *ast.TextBlock:
		parts := r.inlineParts(n, r.body(), true)
		if len(parts) > 0 && parts[0].embed != nil {
			if h, err := r.figureHeight(parts[0].embed, parts[0].id); err == nil {
				return paraGap + h
			}
			return paraGap
		}
		if len(parts) == 0 {
			return 0
		}
		ls := r.m.breakLines(parts[0].spans, r.x1-r.x0)
		return paraGap + float64(min(2, len(ls)))*lh
	case *ast.List:
		if n.FirstChild() != nil && n.FirstChild().FirstChild() != nil {
			return itemGap + r.leadIn(n.FirstChild().FirstChild())
		}
		return 0
	case *ast.Blockquote:
		return paraGap + r.leadIn(n.FirstChild())
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return paraGap + 2*codePad + float64(min(3, n.Lines().Len()))*codeSize*codeLeading
	case *east.Table:
		return paraGap + 2*r.tableRowMin()
	case *ast.Heading:
		hs := headingStyles[min(max(n.Level, 1), 6)]
		return hs.before + hs.size*headingLH
	}
	return 2 * lh
}

// paragraph lays out a paragraph, and the figures it embeds.
func (r *renderer) paragraph(n ast.Node) error {
	for _, p := range r.inlineParts(n, r.body(), true) {
		if p.embed != nil {
			if err := r.figure(p.embed, p.id); err != nil {
				return err
			}
			continue
		}
		if onlySpaces(p.spans) {
			continue
		}
		ls := r.m.breakLines(p.spans, r.x1-r.x0)
		lh := r.lineHeight()
		e := r.tags.open("P")
		err := r.begin(float64(min(2, len(ls))) * lh)
		if err == nil {
			err = r.lines(ls, lh, 'L')
		}
		r.tags.close(e)
		if err != nil {
			return err
		}
		r.space(paraGap)
	}
	return nil
}

func onlySpaces(spans []span) bool {
	for _, s := range spans {
		if strings.TrimSpace(s.text) != "" {
			return false
		}
	}
	return true
}

// list lays out a bullet or numbered list; nested lists indent further and
// change their bullet.
func (r *renderer) list(l *ast.List) error {
	r.listDepth++
	defer func() { r.listDepth-- }()
	x0, x1 := r.x0, r.x1
	defer func() { r.x0, r.x1 = x0, x1 }()

	ordered := l.IsOrdered()
	markerW := 12.0
	last := l.Start + l.ChildCount() - 1
	if ordered {
		markerW = max(markerW, r.m.width(regular, bodySize, strconv.Itoa(last)+".")+6)
	}
	bullets := []string{"\u2022", "\u2013", "\u25E6"}
	num := l.Start
	r.space(paraGap)
	le := r.tags.open("L")
	defer r.tags.close(le)
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		r.space(itemGap)
		if err := r.keepLastItems(item); err != nil {
			return err
		}
		text := bullets[(r.listDepth-1)%len(bullets)]
		if ordered {
			text = strconv.Itoa(num) + "."
			num++
		}
		st := r.body()
		mw := r.m.width(st.face, st.size, text)
		r.marker = &frag{text: text, st: st, w: mw, x: x0 + markerW - mw - 5}
		if !ordered {
			r.marker.x = x0 + 3
		}
		r.x0, r.x1 = r.indent(x0, max(markerW, listIndent)), x1
		if fonts.BaseRTL(markdown.PlainText(item, r.src)) {
			// A right-to-left item reads from the right margin: its
			// marker stands there, mirrored, and its text is indented
			// from the right.
			r.marker.x = x1 - (r.marker.x - x0) - mw
			r.x0, r.x1 = x0, r.indentRight(x1, max(markerW, listIndent))
		}
		li := r.tags.add(le, "LI")
		r.markerElem = r.tags.add(li, "Lbl")
		r.tags.cur = r.tags.add(li, "LBody")
		err := r.blocks(item)
		if err == nil && r.marker != nil { // an empty item
			if err = r.begin(r.lineHeight()); err == nil {
				r.y += r.lineHeight()
			}
		}
		r.tags.cur = le
		if err != nil {
			return err
		}
	}
	r.space(paraGap)
	return nil
}

// keepLastItems starts a new page before item, the last item but one of
// a list of three or more, when item fits on this page and the short
// last item after it does not: the last item would open the next page
// alone.
func (r *renderer) keepLastItems(item ast.Node) error {
	last := item.NextSibling()
	if last == nil || last.NextSibling() != nil || item.PreviousSibling() == nil || r.atTop() {
		return nil
	}
	if last.ChildCount() != 1 || item.ChildCount() != 1 {
		return nil // an item of several blocks breaks within itself
	}
	this := r.pending + r.itemLeadIn(item)
	next := itemGap + r.itemLeadIn(last)
	if r.y+this <= r.bottom+0.01 && r.y+this+next > r.bottom+0.01 {
		return r.newPage()
	}
	return nil
}

// itemLeadIn is leadIn of an item's first block; the item of a tight
// list (a text block) has no paragraph gap.
func (r *renderer) itemLeadIn(item ast.Node) float64 {
	h := r.leadIn(item.FirstChild())
	if _, tight := item.FirstChild().(*ast.TextBlock); tight {
		h -= paraGap
	}
	return h
}

// quote lays out a block quote: its text indented, in a softer ink, with a
// bar down its left side on every page it covers.
func (r *renderer) quote(n *ast.Blockquote) error {
	r.space(paraGap)
	if err := r.begin(r.leadIn(n.FirstChild()) - paraGap); err != nil {
		return err
	}
	x0 := r.x0
	r.x0 = r.indent(x0, quoteInset)
	r.quoteDepth++
	startPage, startY := r.pdf.PageNo(), r.y
	q := r.tags.open("BlockQuote")
	err := r.blocks(n)
	r.tags.close(q)
	r.quoteDepth--
	r.x0 = x0
	if err != nil {
		return err
	}
	endPage, endY := r.pdf.PageNo(), r.y
	for p := startPage; p <= endPage; p++ {
		y0, y1 := r.pageTop(p), r.bottom
		if p == startPage {
			y0 = startY
		}
		if p == endPage {
			y1 = endY
		}
		if y1 > y0 {
			r.flushMark()
			r.pdf.SetPage(p)
			r.tint(x0+2, y0+1, 2.5, y1-y0-2, quoteBar)
			r.fill = rgb{-1, -1, -1}
		}
	}
	r.flushMark()
	r.pdf.SetPage(endPage)
	r.space(paraGap)
	return nil
}

// code lays out a code block in the monospaced face on a grey panel,
// wrapping lines longer than the panel and splitting the panel across
// pages.
func (r *renderer) code(n ast.Node) error {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
	text := strings.TrimRight(r.m.clean(expandTabs(b.String()), true), "\n ")
	st := style{face: mono, size: codeSize, color: inkColor}
	width := r.x1 - r.x0 - 2*codePad
	var ls []line
	for _, src := range strings.Split(text, "\n") {
		ls = append(ls, r.codeLine(src, st, width)...)
	}
	lh := codeSize * codeLeading
	r.space(paraGap)
	ce := r.tags.open("Code")
	defer r.tags.close(ce)
	if err := r.begin(2*codePad + float64(min(3, len(ls)))*lh); err != nil {
		return err
	}
	for i := 0; i < len(ls); {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		fit := int((r.room() - 2*codePad + 0.01) / lh)
		if fit < 1 || (fit < 2 && len(ls)-i > 1) {
			if err := r.newPage(); err != nil {
				return err
			}
			continue
		}
		chunk := ls[i:min(len(ls), i+fit)]
		h := float64(len(chunk))*lh + 2*codePad
		r.tint(r.x0, r.y, r.x1-r.x0, h, codeFill)
		for j, l := range chunk {
			r.drawLine(l, r.x0+codePad, r.y+codePad+float64(j)*lh, lh)
		}
		r.y += h
		i += len(chunk)
	}
	r.space(paraGap)
	return nil
}

// codeLine breaks one source line of code, keeping its spaces, at the
// panel's width.
func (r *renderer) codeLine(src string, st style, width float64) []line {
	if src == "" {
		return []line{{}}
	}
	var ls []line
	it := item{text: src, st: st, w: r.m.width(st.face, st.size, src)}
	for it.text != "" {
		if it.w <= width+0.01 {
			ls = append(ls, r.m.refont(merge([]item{it})))
			break
		}
		head, tail := r.m.splitToFit(it, width, true)
		ls = append(ls, r.m.refont(merge([]item{head})))
		it = tail
	}
	return ls
}

func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	return strings.ReplaceAll(s, "\t", "    ")
}

func (r *renderer) thematicBreak() error {
	r.space(ruleGap)
	if err := r.begin(1); err != nil {
		return err
	}
	r.rule(r.x0, r.x1, r.y, 0.6, ruleColor)
	r.y += 0.6
	r.space(ruleGap)
	return nil
}
