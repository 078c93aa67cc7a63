package xlsx

import (
	"math"
	"strconv"
	"strings"
)

// Column widths, in Excel's unit (the width of a digit of the default
// font). Content wider than maxColumnWidth wraps instead.
const (
	minColumnWidth = 6
	maxColumnWidth = 60
	// cellPadding leaves room for the indent on either side of a cell's
	// content.
	cellPadding = 3
	// headerPadding also leaves room for the autofilter's drop-down
	// button, and headerScale for the bold font.
	headerPadding = 5
	headerScale   = 1.1
	// boldScale is how much wider the totals row's bold digits are.
	boldScale = 1.1
	// uncachedWidth is the guess for a formula whose value is unknown.
	uncachedWidth = 10
)

// layout is what a sheet's column geometry depends on.
type layout struct {
	widths []float64
	// numeric marks columns whose values are mostly numbers, dates or
	// amounts: their header is right-aligned over the numbers.
	numeric []bool
	// totals is the index of the table's totals row, or -1.
	totals int
}

func newLayout(grid [][]cell) layout {
	cols := 0
	for _, row := range grid {
		cols = max(cols, len(row))
	}
	l := layout{widths: make([]float64, cols), numeric: make([]bool, cols), totals: totalsRow(grid)}
	need := make([]float64, cols)
	numbers, filled := make([]int, cols), make([]int, cols)
	for r, row := range grid {
		for c, cl := range row {
			if r == 0 {
				need[c] = max(need[c], float64(cl.width)*headerScale+headerPadding)
				continue
			}
			w := float64(cellWidth(cl))
			if r == l.totals {
				w *= boldScale
			}
			need[c] = max(need[c], w+cellPadding)
			if cl.kind != kindEmpty {
				filled[c]++
			}
			if cl.kind == kindNumber || cl.kind == kindFormula && (isNumber(cl.cached) || cl.cached == nil && cl.format != "") {
				numbers[c]++
			}
		}
	}
	for c := range cols {
		l.widths[c] = math.Round(min(max(need[c], minColumnWidth), maxColumnWidth)*4) / 4
		l.numeric[c] = filled[c] > 0 && numbers[c]*2 > filled[c]
	}
	return l
}

// wraps reports whether a cell's text is laid out on several lines: it
// has line breaks, or it is wider than the widest column.
func wraps(cl cell, header bool) bool {
	if cl.kind != kindText {
		return false
	}
	if strings.Contains(cl.text, "\n") {
		return true
	}
	if header {
		return float64(cl.width)*headerScale+headerPadding > maxColumnWidth
	}
	return cl.width+cellPadding > maxColumnWidth
}

// cellWidth is the display width of a body cell.
func cellWidth(cl cell) int {
	if cl.kind != kindFormula {
		return cl.width
	}
	switch v := cl.cached.(type) {
	case float64:
		return numberWidth(v, cl.format)
	case string:
		return textWidth(v)
	case bool:
		return 5
	}
	return uncachedWidth
}

// numberWidth estimates how wide v shows in format: the digits, the
// separators and decimals the format adds, and its literal text.
func numberWidth(v float64, format string) int {
	if format == "" {
		return generalWidth(strconv.FormatFloat(v, 'f', -1, 64))
	}
	if strings.HasPrefix(format, "yyyy") || strings.HasPrefix(format, "hh") {
		return len(format)
	}
	if strings.HasSuffix(format, "%") {
		v *= 100
	}
	w := len(strconv.FormatFloat(math.Abs(v), 'f', 0, 64))
	if strings.Contains(format, "#,##") {
		w += (w - 1) / 3
	}
	if i := strings.IndexByte(format, '.'); i >= 0 {
		w += 1 + strings.Count(format[i:], "0")
	}
	if v < 0 {
		w++
	}
	// Literal text: a currency symbol and its quotes, a percent sign.
	w += strings.Count(format, `"`)/2 + strings.Count(format, "%") + strings.Count(format, " ")
	return w
}

func isNumber(v any) bool {
	_, ok := v.(float64)
	return ok
}

// Row heights, in points, of the default font.
const (
	lineHeight   = 15
	maxRowHeight = 409 // Excel's limit
)

// rowHeight returns the height a row with wrapped text needs, or 0 for
// the default. Applications do not reliably size such rows themselves
// (LibreOffice shows two lines of a four-line cell), so the height is
// estimated from the lines each wrapped cell breaks into at its column's
// width.
func rowHeight(row []cell, header bool, l layout) float64 {
	lines := 0
	for c, cl := range row {
		if !wraps(cl, header) {
			continue
		}
		room := l.widths[c] - cellPadding
		if header {
			room = (l.widths[c] - headerPadding) / headerScale
		}
		n := 0
		for _, line := range strings.Split(cl.text, "\n") {
			n += max(1, int(math.Ceil(float64(textWidth(line))/room)))
		}
		lines = max(lines, n)
	}
	if lines <= 1 {
		return 0
	}
	return min(float64(lines*lineHeight), maxRowHeight)
}

// totalWords open the label of a totals row.
var totalWords = []string{"total", "totals", "grand total", "subtotal", "sum", "gesamt", "summe", "totaal", "totale", "合计", "总计", "合計"}

// totalsRow finds a table's totals row: its last row, below at least two
// rows of data, labelled "Total" (or "Grand total", "Sum", ...) in its
// first filled cell, or holding only formulas of which one sums a range
// of its column. It is -1 when there is none.
func totalsRow(grid [][]cell) int {
	last := len(grid) - 1
	if last < 3 {
		return -1
	}
	row := grid[last]
	formulas, sums := 0, 0
	for c, cl := range row {
		switch cl.kind {
		case kindEmpty:
			continue
		case kindText:
			if formulas > 0 {
				return -1
			}
			label := strings.ToLower(strings.TrimSpace(strings.TrimRight(cl.text, ":")))
			for _, w := range totalWords {
				if label == w || strings.HasPrefix(label, w+" ") {
					return last
				}
			}
			return -1
		case kindFormula:
			formulas++
			refs, funcs, _ := scanReferences(cl.text)
			for _, fn := range funcs {
				if fn == "SUM" || fn == "SUBTOTAL" {
					for _, ref := range refs {
						if ref.sheet == "" && ref.col1 == c && ref.row2 > ref.row1 && ref.row2 < last {
							sums++
						}
					}
				}
			}
		default:
			return -1
		}
	}
	if formulas > 0 && sums > 0 {
		return last
	}
	return -1
}
