package xlsx

import (
	"github.com/xuri/excelize/v2"
)

// The header row's look: bold dark text on a light blue tint over a
// darker rule, the way an analyst formats a table by hand.
const (
	headerFill   = "DDE7F3"
	headerText   = "1F2A3C"
	headerBorder = "8DA9CC"
	// The totals row: bold over a rule in the header's text colour, and
	// a double rule beneath, as accountants close a column.
	totalsBorder = "1F2A3C"
)

// The default font of excelize's workbook template, named on every
// style: a font left unnamed falls back to the application's default,
// which in LibreOffice is a serif.
const (
	fontFamily = "Calibri"
	fontSize   = 11
)

// formatBool shows booleans as TRUE and FALSE in LibreOffice, which
// otherwise may show them as 1 and 0; Excel shows them so regardless.
const formatBool = `"TRUE";"TRUE";"FALSE"`

// styleKey is everything that sets a cell's style.
type styleKey struct {
	format string
	header bool
	total  bool
	wrap   bool
	align  string
}

// Horizontal alignments. Cells are aligned explicitly, with an indent,
// so that a right-aligned number does not touch the left-aligned text of
// the next column. Excel only indents cells aligned left or right.
const (
	alignGeneral = ""
	alignLeft    = "left"
	alignRight   = "right"
	alignCenter  = "center"
)

// styles creates each distinct cell style once, in the order cells need
// them, so that style ids do not vary between renders.
type styles struct {
	f   *excelize.File
	ids map[styleKey]int
	err error
}

func newStyles(f *excelize.File) *styles {
	return &styles{f: f, ids: make(map[styleKey]int)}
}

// id returns the style id for k, creating the style on first use. A
// failure is kept in s.err and gives the default style.
func (s *styles) id(k styleKey) int {
	if id, ok := s.ids[k]; ok {
		return id
	}
	st := &excelize.Style{
		Font:      &excelize.Font{Family: fontFamily, Size: fontSize},
		Alignment: &excelize.Alignment{Vertical: "top", WrapText: k.wrap, Horizontal: k.align},
	}
	if k.align == alignLeft || k.align == alignRight {
		st.Alignment.Indent = 1
	}
	if k.header {
		st.Font.Bold, st.Font.Color = true, headerText
		st.Fill = excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{headerFill}}
		st.Border = []excelize.Border{{Type: "bottom", Color: headerBorder, Style: 1}}
		st.Alignment.Vertical = "center"
	}
	if k.total {
		st.Font.Bold = true
		st.Border = []excelize.Border{
			{Type: "top", Color: totalsBorder, Style: 1},
			{Type: "bottom", Color: totalsBorder, Style: 6},
		}
	}
	if k.format != "" {
		format := k.format
		st.CustomNumFmt = &format
	}
	id, err := s.f.NewStyle(st)
	if err != nil && s.err == nil {
		s.err = err
	}
	s.ids[k] = id
	return id
}

// value returns what the stream writer writes for a cell in column c of
// row r: nil for an empty body cell, otherwise an excelize.Cell with its
// style. The totals row is styled across the table's width, empty cells
// included.
func (s *styles) value(cl cell, r int, l layout, c int) any {
	header := r == 0
	if header {
		k := styleKey{header: true, wrap: wraps(cl, true), align: alignLeft}
		if l.numeric[c] {
			k.align = alignRight
		}
		if cl.kind == kindEmpty {
			return excelize.Cell{StyleID: s.id(k)}
		}
		return excelize.Cell{StyleID: s.id(k), Value: cl.text}
	}
	k := styleKey{format: cl.format, wrap: wraps(cl, false), total: r == l.totals}
	switch cl.kind {
	case kindEmpty:
		if k.total {
			return excelize.Cell{StyleID: s.id(k)}
		}
	case kindNumber:
		k.align = alignRight
		return excelize.Cell{StyleID: s.id(k), Value: cl.num}
	case kindBool:
		k.format, k.align = formatBool, alignCenter
		return excelize.Cell{StyleID: s.id(k), Value: cl.num == 1}
	case kindText:
		k.align = alignLeft
		return excelize.Cell{StyleID: s.id(k), Value: cl.text}
	case kindFormula:
		// Aligned as its computed value is; left to the application
		// when that is unknown.
		switch cl.cached.(type) {
		case float64:
			k.align = alignRight
		case bool:
			k.align = alignCenter
		case string:
			k.align = alignLeft
		}
		return excelize.Cell{StyleID: s.id(k), Formula: cl.text, Value: cl.cached}
	}
	return nil
}
