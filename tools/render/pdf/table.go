package pdf

import (
	"math"
	"strings"
	"unicode"

	"github.com/switchyardhq/switchyard/tools/render/markdown"
	east "github.com/yuin/goldmark/extension/ast"
)

// Table layout, in points.
const (
	cellPadX    = 5
	cellPadY    = 3.5
	tableLH     = tableSize * 1.35
	tableGap    = 10
	headRule    = 0.8 // rules above and below the header, below the table
	rowRule     = 0.35
	maxColumns  = 64 // wider tables are cut: nothing would be legible
	minColWidth = 24
)

// tableCell is one cell ready to draw.
type tableCell struct {
	spans []span
	text  string // plain, for number detection
	lines []line
	align byte
}

type tableRow []tableCell

func (r *renderer) tableRowMin() float64 { return tableLH + 2*cellPadY }

// table lays out a GFM table across the text width: the header bold on a
// tint and repeated on each page the table continues on, numbers
// right-aligned, long cells wrapped.
func (r *renderer) table(t *east.Table) error {
	head, body := r.tableRows(t)
	ncol := len(t.Alignments)
	for _, row := range append([]tableRow{head}, body...) {
		ncol = max(ncol, len(row))
	}
	ncol = min(ncol, maxColumns)
	if ncol == 0 {
		return nil
	}
	pad := func(row tableRow) tableRow {
		for len(row) < ncol {
			row = append(row, tableCell{})
		}
		return row[:ncol]
	}
	head = pad(head)
	for i := range body {
		body[i] = pad(body[i])
	}
	r.alignColumns(t, head, body)
	widths := r.columnWidths(head, body, r.x1-r.x0)
	layout := func(row tableRow) float64 {
		n := 1
		for i := range row {
			row[i].lines = r.m.breakLines(row[i].spans, widths[i]-2*cellPadX)
			n = max(n, len(row[i].lines))
		}
		return float64(n)*tableLH + 2*cellPadY
	}
	headH := layout(head)
	heights := make([]float64, len(body))
	for i := range body {
		heights[i] = layout(body[i])
	}
	first := 0.0
	if len(body) > 0 {
		first = min(heights[0], 4*tableLH+2*cellPadY)
	}
	r.space(tableGap)
	if err := r.begin(headH + first + headRule); err != nil {
		return err
	}
	te := r.tags.open("Table")
	defer r.tags.close(te)
	r.tags.cur = r.tags.add(te, "TR")
	r.tableHeader(head, widths, headH, "TH")
	r.tags.cur = te
	for i, row := range body {
		if i%32 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		ruleAbove := i > 0
		if r.lastRowWouldBeAlone(heights, i, headH) {
			if err := r.continueTable(head, widths, headH); err != nil {
				return err
			}
			ruleAbove = false
		}
		r.tags.cur = r.tags.add(te, "TR")
		err := r.tableRow(row, widths, heights[i], head, headH, ruleAbove)
		r.tags.cur = te
		if err != nil {
			return err
		}
	}
	r.rule(r.x0, r.x1, r.y, headRule, ruleDark)
	r.y += headRule
	r.space(tableGap)
	return nil
}

// lastRowWouldBeAlone reports whether row i, the last but one, fits on
// the page while the last row would go alone to the next: then both go,
// so that a table never ends with a single row on a page of its own.
func (r *renderer) lastRowWouldBeAlone(heights []float64, i int, headH float64) bool {
	if i == 0 || i != len(heights)-2 {
		return false
	}
	room := r.room() - headRule
	fresh := r.bottom - r.top - headH - 2*headRule
	return heights[i] <= room && heights[i]+heights[i+1] > room && heights[i]+heights[i+1] <= fresh
}

// tableRows reads the header and body rows of t.
func (r *renderer) tableRows(t *east.Table) (head tableRow, body []tableRow) {
	headStyle := style{face: bold, size: tableSize, color: headingColor}
	cellStyle := style{face: regular, size: tableSize, color: inkColor}
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		st := cellStyle
		if _, ok := row.(*east.TableHeader); ok {
			st = headStyle
		}
		var cells tableRow
		for c := row.FirstChild(); c != nil && len(cells) < maxColumns; c = c.NextSibling() {
			cells = append(cells, tableCell{spans: r.spans(c, st), text: strings.TrimSpace(markdown.PlainText(c, r.src))})
		}
		if st == headStyle {
			head = cells
		} else {
			body = append(body, cells)
		}
	}
	return head, body
}

// alignColumns applies the Markdown's column alignment, and otherwise
// right-aligns columns of numbers, header included.
func (r *renderer) alignColumns(t *east.Table, head tableRow, body []tableRow) {
	for col := range head {
		set := byte(0)
		if col < len(t.Alignments) {
			switch t.Alignments[col] {
			case east.AlignLeft:
				set = 'L'
			case east.AlignRight:
				set = 'R'
			case east.AlignCenter:
				set = 'C'
			}
		}
		numbers, others := 0, 0
		for _, row := range body {
			switch {
			case isNumeric(row[col].text):
				numbers++
			case !isPlaceholder(row[col].text):
				others++
			}
		}
		// A column aligns as a whole: numbers right only when the
		// column holds nothing else, so that words never stagger.
		align := byte('L')
		switch {
		case set != 0:
			align = set
		case numbers > 0 && others == 0:
			align = 'R'
		}
		head[col].align = align
		for _, row := range body {
			row[col].align = align
		}
	}
}

// columnWidths shares width among the columns. When every column fits on
// one line, each gets its natural width and the rest is spread in
// proportion. Otherwise headers may wrap between words first; and when
// even that does not fit, narrow columns keep their width and the wide
// ones share what is left in proportion, wrapping their text.
func (r *renderer) columnWidths(head tableRow, body []tableRow, width float64) []float64 {
	n := len(head)
	full := make([]float64, n)  // everything on one line
	tight := make([]float64, n) // the header wrapped at its spaces
	for i := range n {
		cells := 0.0
		for _, row := range body {
			cells = max(cells, r.lineWidth(row[i].spans))
		}
		full[i] = max(minColWidth, cells+2*cellPadX, r.lineWidth(head[i].spans)+2*cellPadX)
		tight[i] = max(minColWidth, cells+2*cellPadX, r.widestWord(head[i].spans)+2*cellPadX)
	}
	sumFull, sumTight := sum(full), sum(tight)
	out := make([]float64, n)
	switch {
	case sumFull <= width:
		for i, w := range full {
			out[i] = w + (width-sumFull)*w/sumFull
		}
		return out
	case sumTight <= width:
		// Give the headers back what room there is, in proportion to
		// what wrapping took from each.
		share := (width - sumTight) / (sumFull - sumTight)
		for i := range out {
			out[i] = tight[i] + (full[i]-tight[i])*share
		}
		return out
	}
	settled := make([]bool, n)
	left, open := width, n
	for changed := true; changed && open > 0; {
		changed = false
		fair := left / float64(open)
		for i, w := range tight {
			if !settled[i] && w <= fair {
				out[i], settled[i] = w, true
				left -= w
				open--
				changed = true
			}
		}
	}
	openWidth := 0.0
	for i, w := range tight {
		if !settled[i] {
			openWidth += w
		}
	}
	for i, w := range tight {
		if !settled[i] {
			out[i] = left * w / openWidth
		}
	}
	floor := make([]float64, n)
	for i := range n {
		floor[i] = max(minColWidth, r.widestWord(head[i].spans)+2*cellPadX)
		for _, row := range body {
			floor[i] = max(floor[i], r.widestWord(row[i].spans)+2*cellPadX)
		}
		floor[i] = min(floor[i], tight[i])
	}
	return keepWords(out, floor, width)
}

// keepWords raises every column to its floor, its widest word, taking
// the room from the columns above theirs in proportion to their width,
// so that no word is split while another column has slack. When the
// floors alone are wider than the table, they share it in proportion.
func keepWords(out, floor []float64, width float64) []float64 {
	if sum(floor) >= width {
		for i := range out {
			out[i] = width * floor[i] / sum(floor)
		}
		return out
	}
	fixed := make([]bool, len(out))
	for range out {
		short := false
		for i := range out {
			if !fixed[i] && out[i] < floor[i]-0.01 {
				out[i], fixed[i], short = floor[i], true, true
			}
		}
		if !short {
			break
		}
		fixedW, freeW := 0.0, 0.0
		for i, w := range out {
			if fixed[i] {
				fixedW += w
			} else {
				freeW += w
			}
		}
		if freeW <= 0 {
			break
		}
		for i := range out {
			if !fixed[i] {
				out[i] *= (width - fixedW) / freeW
			}
		}
	}
	return out
}

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

// lineWidth is the width of spans set on one line (the widest line when
// they hold forced breaks).
func (r *renderer) lineWidth(spans []span) float64 {
	w := 0.0
	for _, l := range r.m.breakLines(spans, math.MaxFloat32) {
		w = max(w, l.w)
	}
	return w
}

// widestWord is the width of the widest word of spans.
func (r *renderer) widestWord(spans []span) float64 {
	w := 0.0
	for _, it := range r.m.tokenize(spans) {
		if !it.space && !it.brk {
			w = max(w, it.w)
		}
	}
	return w
}

// tableHeader draws the header row on its tint between two rules.
// cellType is the structure type of its cells, "" for none (a repeated
// header).
func (r *renderer) tableHeader(head tableRow, widths []float64, h float64, cellType string) {
	r.tint(r.x0, r.y, r.x1-r.x0, h+headRule, headerFill)
	r.rule(r.x0, r.x1, r.y, headRule, ruleDark)
	r.y += headRule
	r.cells(head, widths, r.y, 0, 1<<30, cellType)
	r.y += h
	r.rule(r.x0, r.x1, r.y, headRule/2, ruleDark)
}

// tableRow draws a body row, moving to a new page (with the header
// repeated) when it does not fit, and splitting a row taller than a page.
func (r *renderer) tableRow(row tableRow, widths []float64, h float64, head tableRow, headH float64, ruleAbove bool) error {
	maxLines := 1
	for _, c := range row {
		maxLines = max(maxLines, len(c.lines))
	}
	fresh := r.bottom - r.top - headH - 2*headRule
	if h > r.room()-headRule && h <= fresh {
		if err := r.continueTable(head, widths, headH); err != nil {
			return err
		}
		ruleAbove = false
	}
	for from := 0; from < maxLines; {
		fit := int((r.room() - 2*cellPadY - headRule + 0.01) / tableLH)
		if fit < 1 {
			if err := r.continueTable(head, widths, headH); err != nil {
				return err
			}
			ruleAbove = false
			continue
		}
		n := min(fit, maxLines-from)
		if ruleAbove {
			r.rule(r.x0, r.x1, r.y, rowRule, ruleColor)
		}
		r.cells(row, widths, r.y, from, from+n, "TD")
		r.y += float64(n)*tableLH + 2*cellPadY
		from += n
		if from < maxLines {
			if err := r.continueTable(head, widths, headH); err != nil {
				return err
			}
			ruleAbove = false
		}
	}
	return nil
}

// continueTable closes the table at the foot of the page and repeats its
// header on the next.
func (r *renderer) continueTable(head tableRow, widths []float64, headH float64) error {
	r.rule(r.x0, r.x1, r.y, headRule, ruleDark)
	if err := r.newPage(); err != nil {
		return err
	}
	// A header taller than a quarter page is not worth repeating, and
	// repeating one taller than the page would never leave room for a
	// row.
	if headH <= (r.bottom-r.top)/4 {
		// The repeated header is page furniture: the structure has the
		// header row once.
		r.artifactOf("/Type /Pagination", func() { r.tableHeader(head, widths, headH, "") })
	} else {
		r.rule(r.x0, r.x1, r.y, headRule, ruleDark)
	}
	return nil
}

// cells draws lines [from, to) of each cell of row with top at y.
// Each cell is an element of type cellType under the current row, made
// when its first line is drawn; with cellType "" the cells are drawn into
// whatever is open (an artifact).
func (r *renderer) cells(row tableRow, widths []float64, y float64, from, to int, cellType string) {
	x := r.x0
	tr := r.tags.cur
	for i, c := range row {
		if cellType != "" {
			if from == 0 {
				e := r.tags.add(tr, cellType)
				if cellType == "TH" {
					// A reader announces each cell with its column's header.
					e.attrs = "<</O /Table /Scope /Column>>"
				}
			}
			if i < len(tr.kids) {
				r.tags.cur = tr.kids[i].elem
			}
		}
		inner := widths[i] - 2*cellPadX
		for j := from; j < min(to, len(c.lines)); j++ {
			l := c.lines[j]
			lx := x + cellPadX
			switch c.align {
			case 'R':
				lx += inner - l.w
			case 'C':
				lx += (inner - l.w) / 2
			}
			r.drawLine(l, lx, y+cellPadY+float64(j-from)*tableLH, tableLH)
		}
		r.tags.cur = tr
		x += widths[i]
	}
}

// isNumeric reports whether a cell reads as a number: digits with
// thousands separators and decimals, optionally signed, in parentheses,
// with a currency sign, a percent sign or a unit suffix such as k, M, bn
// or x.
func isNumeric(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	s = strings.TrimPrefix(s, "(")
	s = strings.TrimSuffix(s, ")")
	s = strings.TrimLeft(s, "+-−±~≈<>")
	s = strings.TrimLeftFunc(s, func(r rune) bool { return unicode.Is(unicode.Sc, r) || r == ' ' })
	digits := 0
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case (c == ',' || c == '.' || c == ' ' || c == '\'') && digits > 0:
		default:
			goto suffix
		}
		i++
	}
suffix:
	if digits == 0 {
		return false
	}
	rest := strings.ToLower(strings.TrimSpace(s[i:]))
	rest = strings.TrimRightFunc(rest, func(r rune) bool { return unicode.Is(unicode.Sc, r) })
	switch rest {
	case "", "%", "k", "m", "b", "bn", "mn", "x", "×", "pp", "bp", "bps", "pts", "eur", "usd", "gbp", "chf", "jpy":
		return true
	}
	return false
}

// isPlaceholder reports a cell that stands for no value, which does not
// stop a column from counting as numeric.
func isPlaceholder(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "-", "–", "—", "n/a", "na", "n.a.", "?":
		return true
	}
	return false
}
