package xlsx

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// A column of a table shows its numbers one way: the amounts of a
// currency column all as amounts, with as many decimals each, so that
// the decimal points line up. settleColumnFormats decides that format
// once the formulas' values are known:
//
//   - the column's family is the one most of its formatted numbers use
//     (currency, percent, or plain number); dates and times are left as
//     they are;
//   - a formula that divides, whose format nothing else chose, is a
//     ratio and shows as a percentage with one decimal (two or three
//     when the largest is under 0.1% or 0.01%) when its column's
//     header names a ratio ("Share", "Margin", "Growth", "%") or when all
//     such values of the column lie between -1 and 1 and the header does
//     not name a per-unit value ("Price", "Average", "per");
//   - the number of decimals is the most written by the column's typed
//     values (at most four), or, in a column of formulas only, two when
//     any value has a fraction and none otherwise;
//   - plain numbers get thousands separators when the column's largest
//     value reaches 1,000, unless its header names an identifier or a
//     year ("ID", "Year", "Code", "Zip", "No") or all its values are
//     whole numbers between 1900 and 2100;
//   - JSON numbers (General) in a currency column become amounts of its
//     currency; other amounts keep their own symbol and take the
//     column's decimals.

// familyKind is what a number format shows.
type familyKind uint8

const (
	familyGeneral familyKind = iota
	familyNumber
	familyCurrency
	familyPercent
	familyOther // dates, times, booleans
)

// numFormat is a number format taken apart.
type numFormat struct {
	family   familyKind
	symbol   string // currency symbol
	suffix   bool   // the symbol follows the number
	decimals int
	grouped  bool
}

func parseNumFormat(f string) numFormat {
	if f == "" {
		return numFormat{family: familyGeneral}
	}
	if strings.HasPrefix(f, "yyyy") || strings.HasPrefix(f, "hh") || f == formatBool {
		return numFormat{family: familyOther}
	}
	n := numFormat{family: familyNumber, grouped: strings.Contains(f, "#,##")}
	if i := strings.IndexByte(f, '.'); i >= 0 {
		n.decimals = strings.Count(f[i:], "0")
	}
	switch {
	case strings.HasSuffix(f, "%"):
		n.family = familyPercent
	case isCurrencyFormat(f):
		n.family = familyCurrency
		first := strings.IndexByte(f, '"')
		last := strings.LastIndexByte(f, '"')
		if first >= 0 && last > first {
			n.symbol = f[first+1 : last]
		}
		n.suffix = first > 0
	}
	return n
}

func (n numFormat) String() string {
	number := "0"
	if n.grouped {
		number = "#,##0"
	}
	number += decimalsFormat(n.decimals)
	switch n.family {
	case familyPercent:
		return number + "%"
	case familyCurrency:
		if n.suffix {
			return number + ` "` + n.symbol + `"`
		}
		return `"` + n.symbol + `"` + number
	}
	return number
}

// maxTypedDecimals bounds the decimals a column shows for its typed
// values: a model writing 0.6958059566 means a ratio, not ten decimals.
const maxTypedDecimals = 4

// ratioWords in a header name a ratio; perUnitWords a value per unit.
var (
	ratioWords   = []string{"share", "margin", "growth", "ratio", "percent", "pct", "rate", "yield", "conversion", "change", "%"}
	perUnitWords = []string{"price", "average", "avg", "per", "mean", "cost", "amount", "total"}
	dateWords    = []string{"date", "due", "deadline", "expiry", "expires"}
	idWords      = map[string]bool{
		"id": true, "year": true, "yr": true, "fy": true, "code": true, "zip": true, "postcode": true,
		"phone": true, "no": true, "number": true, "num": true, "sku": true, "ref": true, "isbn": true, "ean": true,
	}
)

func headerWords(h string) []string {
	return strings.FieldsFunc(strings.ToLower(h), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '%'
	})
}

func headerHas(words []string, set []string) bool {
	for _, w := range words {
		for _, s := range set {
			if w == s || s == "%" && strings.Contains(w, "%") {
				return true
			}
		}
	}
	return false
}

// settleColumnFormats gives each column of each sheet one number format
// as described above.
func settleColumnFormats(grids [][][]cell) {
	for _, grid := range grids {
		if len(grid) < 2 {
			continue
		}
		cols := 0
		for _, row := range grid {
			cols = max(cols, len(row))
		}
		for c := range cols {
			header := ""
			if c < len(grid[0]) {
				header = grid[0][c].text
			}
			settleColumn(grid, c, headerWords(header))
		}
	}
}

// numericValue returns the number a body cell shows, if it shows one.
func numericValue(cl cell) (float64, bool) {
	switch cl.kind {
	case kindNumber:
		return cl.num, true
	case kindFormula:
		v, ok := cl.cached.(float64)
		return v, ok
	}
	return 0, false
}

func isRatioFormula(cl cell) bool {
	if cl.kind != kindFormula || cl.formatChosen && cl.format != "" {
		return false
	}
	return divides(cl.text)
}

// divides reports whether formula f divides: a "/" outside its strings
// and quoted sheet names.
func divides(f string) bool {
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '/':
			return true
		case '"', '\'':
			end := closingQuote(f, i)
			if end < 0 {
				return false
			}
			i = end
		}
	}
	return false
}

func settleColumn(grid [][]cell, c int, header []string) {
	// A column has a handful of distinct formats: each is taken apart
	// and rewritten once, not once per cell.
	parsed := map[string]numFormat{}
	parse := func(f string) numFormat {
		nf, ok := parsed[f]
		if !ok {
			nf = parseNumFormat(f)
			parsed[f] = nf
		}
		return nf
	}
	rewritten := map[string]string{}
	var (
		counts      [familyOther + 1]int
		currencies  = map[string]int{}
		typedDec    = -1
		formulaFrac bool
		maxAbs      float64
		allYears    = true
		ratios      []*cell
		isRatio     map[*cell]bool
		ratioInUnit = true
		grouped     bool
		numbers     int
	)
	for r := 1; r < len(grid); r++ {
		if c >= len(grid[r]) {
			continue
		}
		cl := &grid[r][c]
		v, ok := numericValue(*cl)
		if !ok {
			continue
		}
		numbers++
		maxAbs = max(maxAbs, math.Abs(v))
		if v != math.Trunc(v) || v < 1900 || v > 2100 {
			allYears = false
		}
		if isRatioFormula(*cl) {
			ratios = append(ratios, cl)
			if isRatio == nil {
				isRatio = map[*cell]bool{}
			}
			isRatio[cl] = true
			if math.Abs(v) > 1 {
				ratioInUnit = false
			}
			continue
		}
		nf := parse(cl.format)
		counts[nf.family]++
		grouped = grouped || nf.grouped
		if nf.family == familyCurrency {
			currencies[cl.format]++
		}
		switch {
		case cl.kind == kindNumber && nf.family == familyGeneral:
			typedDec = max(typedDec, min(valueDecimals(v), maxTypedDecimals))
		case cl.kind == kindNumber, nf.family != familyGeneral:
			typedDec = max(typedDec, nf.decimals)
		case v != math.Trunc(v):
			formulaFrac = true
		}
	}
	if numbers == 0 {
		return
	}
	percentRatios := len(ratios) > 0 && (headerHas(header, ratioWords) ||
		ratioInUnit && !headerHas(header, perUnitWords))
	if percentRatios {
		// One decimal, or more where the ratios are all so small that
		// one would show them as 0.0% (the share of one row in
		// thousands).
		largest := 0.0
		for _, cl := range ratios {
			v, _ := numericValue(*cl)
			largest = max(largest, math.Abs(v))
		}
		format := "0.0%"
		switch {
		case largest > 0 && largest < 0.0001:
			format = "0.000%"
		case largest > 0 && largest < 0.001:
			format = "0.00%"
		}
		for _, cl := range ratios {
			cl.format, cl.formatChosen = format, true
		}
	} else {
		for _, cl := range ratios {
			counts[familyGeneral]++
			if v, _ := numericValue(*cl); v != math.Trunc(v) {
				formulaFrac = true
			}
		}
	}
	if counts[familyOther] > 0 && counts[familyOther] >= counts[familyNumber]+counts[familyCurrency]+counts[familyPercent] {
		return
	}
	if headerHas(header, dateWords) && counts[familyNumber]+counts[familyCurrency]+counts[familyPercent] == 0 &&
		len(ratios) == 0 && settleDates(grid, c) {
		return
	}
	family := familyNumber
	if counts[familyCurrency] > 0 && counts[familyCurrency] >= counts[familyPercent] {
		family = familyCurrency
	} else if counts[familyPercent] > 0 {
		family = familyPercent
	}
	decimals := typedDec
	if decimals < 0 {
		decimals = 0
		if formulaFrac {
			decimals = 2
		}
	}
	var target numFormat
	switch family {
	case familyCurrency:
		best, bestN := "", -1
		for f, n := range currencies {
			if n > bestN || n == bestN && f < best {
				best, bestN = f, n
			}
		}
		target = parseNumFormat(best)
		target.grouped = true
	case familyPercent:
		target = numFormat{family: familyPercent, grouped: grouped}
	default:
		target = numFormat{family: familyNumber, grouped: grouped ||
			maxAbs >= 1000 && !allYears && !headerHasID(header)}
	}
	target.decimals = decimals
	targetFormat := target.String()
	for r := 1; r < len(grid); r++ {
		if c >= len(grid[r]) {
			continue
		}
		cl := &grid[r][c]
		v, ok := numericValue(*cl)
		if !ok || percentRatios && isRatio[cl] {
			continue
		}
		nf := parse(cl.format)
		switch {
		case nf.family == familyOther:
		case family == familyPercent && nf.family != familyPercent && math.Abs(v) > 1:
			// A plain 5 beside "5%" is not 500%.
		case nf.family == familyCurrency && family == familyCurrency:
			f, ok := rewritten[cl.format]
			if !ok {
				nf.decimals, nf.grouped = decimals, true
				f = nf.String()
				rewritten[cl.format] = f
			}
			cl.format = f
		case nf.family == familyGeneral && cl.kind == kindNumber && family == familyNumber &&
			!target.grouped && decimals == 0:
			// Whole numbers stay General: a column of counts needs no format.
		default:
			cl.format = targetFormat
		}
		cl.formatChosen = true
	}
}

func headerHasID(words []string) bool {
	for _, w := range words {
		if idWords[w] {
			return true
		}
	}
	return false
}

// valueDecimals is how many decimals the shortest form of v has.
func valueDecimals(v float64) int {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// Excel's date serials: 1900-01-01 is 1 and 9999-12-31 is 2958465.
const maxDateSerial = 2958465

// settleDates shows a column of formulas headed as dates ("Due date",
// "=A2+30") as dates, if all its values are date serials, and reports
// whether it did. Arithmetic on dates leaves no format of its own.
func settleDates(grid [][]cell, c int) bool {
	format := formatDate
	for r := 1; r < len(grid); r++ {
		if c >= len(grid[r]) {
			continue
		}
		v, ok := numericValue(grid[r][c])
		switch {
		case !ok:
		case v < 1 || v > maxDateSerial:
			return false
		case v != math.Trunc(v):
			format = formatDateTime
		}
	}
	for r := 1; r < len(grid); r++ {
		if c < len(grid[r]) && grid[r][c].kind == kindFormula {
			if _, ok := grid[r][c].cached.(float64); ok {
				grid[r][c].format, grid[r][c].formatChosen = format, true
			}
		}
	}
	return true
}
