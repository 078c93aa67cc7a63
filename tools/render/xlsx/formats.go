package xlsx

import (
	"strings"

	"github.com/xuri/excelize/v2"
)

// The model cannot give a formula a number format, so one is chosen for
// it, in this order:
//
//  1. the format most used by the typed values in its column (a total
//     under amounts is an amount, under plain counts a plain number);
//  2. the format of the cells it refers to: an amount if any of them is
//     one (price times quantity), otherwise their format if they all
//     share it; nothing when it divides, counts or works on dates,
//     whose results are in other units;
//  3. its column's format, once values are computed (columns.go): a
//     ratio as a percentage, otherwise two decimals when its value has a
//     fraction, so that it does not show fifteen digits.

// unitChangingFunctions return counts, positions or date parts, whatever
// the format of their arguments.
var unitChangingFunctions = map[string]bool{
	"COUNT": true, "COUNTA": true, "COUNTIF": true, "COUNTIFS": true, "COUNTBLANK": true,
	"ROWS": true, "COLUMNS": true, "ROW": true, "COLUMN": true, "LEN": true,
	"MATCH": true, "XMATCH": true, "RANK": true, "RANK.EQ": true, "RANK.AVG": true,
	"YEAR": true, "MONTH": true, "DAY": true, "WEEKDAY": true, "WEEKNUM": true,
	"HOUR": true, "MINUTE": true, "SECOND": true, "DAYS": true, "DATEDIF": true,
	"NETWORKDAYS": true, "YEARFRAC": true, "CORREL": true,
}

// maxRangeCells bounds how many cells of a referenced range are looked
// at for their format.
const maxRangeCells = 1000

// inferFormulaFormats applies rules 1 and 2 to every formula of the
// workbook, in sheet and row order, so that a total refers to formulas
// whose format is already settled.
func inferFormulaFormats(names []string, grids [][][]cell) {
	sheetIndex := make(map[string]int, len(names))
	for i, name := range names {
		sheetIndex[strings.ToLower(name)] = i
	}
	for i, grid := range grids {
		columns := columnFormats(grid)
		for r := 1; r < len(grid); r++ {
			for c := range grid[r] {
				cl := &grid[r][c]
				if cl.kind != kindFormula || cl.format != "" {
					continue
				}
				if f, ok := columns[c]; ok {
					cl.format, cl.formatChosen = f, true
					continue
				}
				cl.format = referencedFormat(cl.text, i, sheetIndex, grids)
				cl.formatChosen = cl.format != ""
			}
		}
	}
}

// columnFormats returns, for each column with typed values below the
// header, the format they use most; ties go to the lesser format, so the
// choice is stable.
func columnFormats(grid [][]cell) map[int]string {
	counts := map[int]map[string]int{}
	for r := 1; r < len(grid); r++ {
		for c, cl := range grid[r] {
			if cl.kind != kindNumber {
				continue
			}
			if counts[c] == nil {
				counts[c] = map[string]int{}
			}
			counts[c][cl.format]++
		}
	}
	formats := make(map[int]string, len(counts))
	for c, m := range counts {
		best, bestN := "", -1
		for f, n := range m {
			if n > bestN || n == bestN && f < best {
				best, bestN = f, n
			}
		}
		formats[c] = best
	}
	return formats
}

// referencedFormat applies rule 2 to formula f on sheet self.
func referencedFormat(f string, self int, sheetIndex map[string]int, grids [][][]cell) string {
	refs, funcs, divides := scanReferences(f)
	if divides {
		return ""
	}
	for _, fn := range funcs {
		if unitChangingFunctions[fn] {
			return ""
		}
	}
	var formats []string
	for _, ref := range refs {
		sheet := self
		if ref.sheet != "" {
			i, ok := sheetIndex[strings.ToLower(ref.sheet)]
			if !ok {
				return ""
			}
			sheet = i
		}
		formats = appendRangeFormats(formats, grids[sheet], ref)
	}
	if len(formats) == 0 {
		return ""
	}
	for _, f := range formats {
		if isCurrencyFormat(f) {
			return f
		}
	}
	for _, f := range formats {
		if f != formats[0] || strings.HasPrefix(f, "yyyy") || strings.HasPrefix(f, "hh") {
			return ""
		}
	}
	return formats[0]
}

// appendRangeFormats appends the formats of the numeric cells (numbers,
// and formulas whose format is settled) in ref.
func appendRangeFormats(formats []string, grid [][]cell, ref reference) []string {
	seen := 0
	for r := ref.row1; r <= ref.row2 && r < len(grid); r++ {
		if seen++; seen > maxRangeCells {
			return formats
		}
		for c := ref.col1; c <= ref.col2 && c < len(grid[r]); c++ {
			if seen++; seen > maxRangeCells {
				return formats
			}
			cl := grid[r][c]
			if cl.kind == kindNumber || cl.kind == kindFormula && cl.format != "" {
				formats = append(formats, cl.format)
			}
		}
	}
	return formats
}

func isCurrencyFormat(f string) bool {
	return strings.Contains(f, `"`)
}

// reference is a cell or range reference in a formula, zero-based.
type reference struct {
	sheet      string
	col1, row1 int
	col2, row2 int
}

// scanReferences finds the A1-style references of a formula, the
// functions it calls (upper-cased) and whether it divides. Strings are
// skipped. Whole-column and whole-row ranges and names are not
// references here.
func scanReferences(f string) (refs []reference, funcs []string, divides bool) {
	sheet := ""
	for i := 0; i < len(f); {
		c := f[i]
		switch {
		case c == '"':
			end := closingQuote(f, i)
			if end < 0 {
				return refs, funcs, divides
			}
			i, sheet = end+1, ""
		case c == '\'':
			end := closingQuote(f, i)
			if end < 0 || end+1 >= len(f) || f[end+1] != '!' {
				return refs, funcs, divides
			}
			sheet = strings.ReplaceAll(f[i+1:end], "''", "'")
			i = end + 2
		case c == '/':
			divides = true
			i++
		case isIdentByte(c):
			j := i
			for j < len(f) && (isIdentByte(f[j]) || f[j] == '$') {
				j++
			}
			word := f[i:j]
			switch {
			case j < len(f) && f[j] == '(':
				funcs = append(funcs, strings.ToUpper(word))
				sheet = ""
			case j < len(f) && f[j] == '!':
				sheet = word
				j++
			default:
				if ref, end, ok := parseRange(f, i); ok {
					ref.sheet = sheet
					refs = append(refs, ref)
					j = end
				}
				sheet = ""
			}
			i = j
		case c == '$':
			if ref, end, ok := parseRange(f, i); ok {
				ref.sheet = sheet
				refs = append(refs, ref)
				i = end
			} else {
				i++
			}
			sheet = ""
		default:
			i++
			sheet = ""
		}
	}
	return refs, funcs, divides
}

// renameSheets rewrites the sheet names a formula refers to by the
// names the sheets were given, rename mapping lower-cased asked names to
// given ones. Everything else is kept byte for byte.
func renameSheets(f string, rename map[string]string) string {
	var b strings.Builder
	last := 0 // f[:last] is in b
	replace := func(start, end int, asked string) {
		given, ok := rename[strings.ToLower(asked)]
		if !ok {
			return
		}
		b.WriteString(f[last:start])
		b.WriteString("'" + strings.ReplaceAll(given, "'", "''") + "'")
		last = end
	}
	for i := 0; i < len(f); {
		switch c := f[i]; {
		case c == '"':
			end := closingQuote(f, i)
			if end < 0 {
				i = len(f)
				break
			}
			i = end + 1
		case c == '\'':
			end := closingQuote(f, i)
			if end < 0 {
				i = len(f)
				break
			}
			if end+1 < len(f) && f[end+1] == '!' {
				replace(i, end+1, strings.ReplaceAll(f[i+1:end], "''", "'"))
			}
			i = end + 1
		case isIdentByte(c):
			j := i
			for j < len(f) && isIdentByte(f[j]) {
				j++
			}
			if j < len(f) && f[j] == '!' {
				replace(i, j, f[i:j])
			}
			i = j
		default:
			i++
		}
	}
	if last == 0 {
		return f
	}
	b.WriteString(f[last:])
	return b.String()
}

// parseRange reads "A1", "$A$1" or "A1:B5" at f[i:] and returns the
// reference and where it ends.
func parseRange(f string, i int) (reference, int, bool) {
	col1, row1, end, ok := parseCellRef(f, i)
	if !ok {
		return reference{}, 0, false
	}
	ref := reference{col1: col1, row1: row1, col2: col1, row2: row1}
	if end < len(f) && f[end] == ':' {
		if col2, row2, end2, ok := parseCellRef(f, end+1); ok {
			ref.col1, ref.col2 = min(col1, col2), max(col1, col2)
			ref.row1, ref.row2 = min(row1, row2), max(row1, row2)
			end = end2
		}
	}
	return ref, end, true
}

// parseCellRef reads one cell reference, which must not run on into an
// identifier (as "A1B" or "LOG10(" would).
func parseCellRef(f string, i int) (col, row, end int, ok bool) {
	j := i
	if j < len(f) && f[j] == '$' {
		j++
	}
	letters := j
	for j < len(f) && (f[j] >= 'A' && f[j] <= 'Z' || f[j] >= 'a' && f[j] <= 'z') {
		j++
	}
	name := f[letters:j]
	if j < len(f) && f[j] == '$' {
		j++
	}
	digits := j
	for j < len(f) && f[j] >= '0' && f[j] <= '9' {
		j++
	}
	if name == "" || len(name) > 3 || j == digits || j-digits > 7 {
		return 0, 0, 0, false
	}
	if j < len(f) && (isIdentByte(f[j]) || f[j] == '(') {
		return 0, 0, 0, false
	}
	col, err := excelize.ColumnNameToNumber(name)
	if err != nil {
		return 0, 0, 0, false
	}
	row = atoiDigits(f[digits:j])
	if row < 1 {
		return 0, 0, 0, false
	}
	return col - 1, row - 1, j, true
}

func atoiDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
