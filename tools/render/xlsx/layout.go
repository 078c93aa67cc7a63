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
	// uncachedWidth is the guess for a formula whose value is unknown.
	uncachedWidth = 10
)

// layout is what a sheet's column geometry depends on.
type layout struct {
	widths []float64
	// numeric marks columns whose values are mostly numbers, dates or
	// amounts: their header is right-aligned over the numbers.
	numeric []bool
}

func newLayout(grid [][]cell) layout {
	cols := 0
	for _, row := range grid {
		cols = max(cols, len(row))
	}
	l := layout{widths: make([]float64, cols), numeric: make([]bool, cols)}
	need := make([]float64, cols)
	numbers, filled := make([]int, cols), make([]int, cols)
	for r, row := range grid {
		for c, cl := range row {
			if r == 0 {
				need[c] = max(need[c], float64(cl.width)*headerScale+headerPadding)
				continue
			}
			need[c] = max(need[c], float64(cellWidth(cl)+cellPadding))
			if cl.kind != kindEmpty {
				filled[c]++
			}
			if cl.kind == kindNumber || cl.kind == kindFormula && isNumber(cl.cached) {
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
