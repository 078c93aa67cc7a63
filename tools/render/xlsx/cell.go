package xlsx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is what a cell is written as.
type kind uint8

const (
	kindEmpty kind = iota
	kindNumber
	kindBool
	kindText
	kindFormula
)

// cell is one cell as it will be written: its kind, value and number
// format, and the width it needs when displayed.
type cell struct {
	kind kind
	// width is the cell's display width in characters of the default
	// font (the longest line for multi-line text).
	width int
	// num is the value of a number, or 1 and 0 for a boolean.
	num float64
	// text is the text of a text cell, or a formula without its "=".
	text string
	// format is the number format; empty is General.
	format string
	// formatChosen records that a formula's format was chosen from its
	// column or references, even if that choice is General.
	formatChosen bool
	// cached is a formula's computed value (float64, string or bool), nil
	// when it was not computed.
	cached any
	// calc is how far the evaluator got with a formula, and errCode the
	// Excel error it computes to.
	calc    uint8
	errCode string
}

// Number formats. Dates use ISO 8601 order, which no reader misreads.
const (
	formatDate     = "yyyy-mm-dd"
	formatDateTime = "yyyy-mm-dd hh:mm"
	formatTime     = "hh:mm"
)

// classifyBody reads one body cell (not the header row); raw has been
// validated.
func classifyBody(raw json.RawMessage) cell {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return cell{}
	}
	switch raw[0] {
	case 'n':
		return cell{}
	case 't':
		return cell{kind: kindBool, num: 1, width: 4}
	case 'f':
		return cell{kind: kindBool, num: 0, width: 5}
	case '"':
		s, _ := decodeString(raw)
		return classifyString(s)
	}
	f, _ := parseJSONNumber(raw)
	return cell{kind: kindNumber, num: f, width: generalWidth(string(raw))}
}

// headerCell reads a header-row cell: always text, so that a header of
// years or a header starting with "=" reads as written.
func headerCell(raw json.RawMessage) cell {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return cell{}
	}
	var s string
	switch raw[0] {
	case 'n':
		return cell{}
	case 't':
		s = "TRUE"
	case 'f':
		s = "FALSE"
	case '"':
		s, _ = decodeString(raw)
		s = cleanText(s)
	default:
		s = string(raw)
	}
	if s == "" {
		return cell{}
	}
	return cell{kind: kindText, text: s, width: textWidth(s)}
}

// classifyString applies the typing rules of the package documentation
// to a string cell.
func classifyString(s string) cell {
	if body, ok := formulaBody(s); ok {
		return cell{kind: kindFormula, text: cleanFormula(body)}
	}
	if rest, ok := strings.CutPrefix(s, "'"); ok {
		// Excel's own escape: a leading apostrophe keeps what follows as
		// text. It is dropped only where it changed something, so that
		// "'90s" stays as written.
		if c := classifyString(rest); c.kind != kindText {
			rest = cleanText(rest)
			return cell{kind: kindText, text: rest, width: textWidth(rest)}
		}
	}
	if c, ok := parseTyped(strings.TrimSpace(s)); ok {
		return c
	}
	s = cleanText(s)
	if s == "" {
		return cell{}
	}
	return cell{kind: kindText, text: s, width: textWidth(s)}
}

// formulaBody reports whether s is a formula and returns it without its
// "=". A lone "=" and strings starting with "==" (rules drawn as
// "=== Totals ===") are text.
func formulaBody(s string) (string, bool) {
	if len(s) < 2 || s[0] != '=' || s[1] == '=' {
		return "", false
	}
	body := s[1:]
	if strings.TrimSpace(body) == "" {
		return "", false
	}
	return body, true
}

// parseTyped reads a trimmed string as a date, time, percentage, amount
// of money or number, in that order.
func parseTyped(s string) (cell, bool) {
	if s == "" {
		return cell{}, false
	}
	if c, ok := parseDateTime(s); ok {
		return c, true
	}
	if c, ok := parsePercent(s); ok {
		return c, true
	}
	if c, ok := parseCurrency(s); ok {
		return c, true
	}
	return parsePlainNumber(s)
}

// parsePlainNumber reads "1234", "-12.50" and "1,234,567.89": a decimal
// number with an optional minus sign and optional comma thousands
// separators. Leading zeros ("007"), a plus sign ("+1 555 0100"),
// exponents and more than 15 significant digits (card numbers, long ids)
// are not numbers: Excel would drop the zeros or the digits.
func parsePlainNumber(s string) (cell, bool) {
	neg, body := cutMinus(s)
	n, ok := parseDecimal(body, ',', '.')
	if !ok {
		return cell{}, false
	}
	format := ""
	switch {
	case n.grouped:
		format = "#,##0" + decimalsFormat(n.decimals)
	case n.decimals > 0:
		// "3.50" shows as written, not as General's "3.5".
		format = "0" + decimalsFormat(n.decimals)
	}
	return cell{kind: kindNumber, num: n.signed(neg), format: format, width: len(s)}, true
}

// parsePercent reads "12.5%", "-3 %" and "1,250%" as 0.125, -0.03 and
// 12.5 with a percent format showing the decimals written.
func parsePercent(s string) (cell, bool) {
	body, ok := strings.CutSuffix(s, "%")
	if !ok {
		return cell{}, false
	}
	body = strings.TrimSuffix(body, " ")
	neg, body := cutMinus(body)
	n, ok := parseDecimal(body, ',', '.')
	if !ok {
		return cell{}, false
	}
	// Scaling in the parse ("12.5e-2") rounds once, where dividing by 100
	// would round twice (0.07/100 is not 0.0007).
	v, err := strconv.ParseFloat(n.digits+"e-2", 64)
	if err != nil {
		return cell{}, false
	}
	n.value = v
	format := "0" + decimalsFormat(n.decimals) + "%"
	if n.grouped {
		format = "#,##" + format
	}
	return cell{kind: kindNumber, num: n.signed(neg), format: format, width: len(s)}, true
}

// currencySymbols are the symbols read as money.
var currencySymbols = []string{"$", "€", "£", "¥"}

// parseCurrency reads amounts of money: "$1,234.50", "-$5", "($5.00)",
// "$-5", "€1.234,50", "1.234,50 €", "£12", "¥1,000". The symbol stays
// where it was written; the separators are read by their position (the
// last of "." and "," is the decimal one), a lone "," followed by one or
// two digits is a decimal comma and one followed by three is a thousands
// separator.
func parseCurrency(s string) (cell, bool) {
	body := s
	neg := false
	if strings.HasPrefix(body, "(") && strings.HasSuffix(body, ")") {
		neg, body = true, body[1:len(body)-1]
	}
	if m, rest := cutMinus(body); m {
		if neg {
			return cell{}, false
		}
		neg, body = true, rest
	}
	symbol, prefix := "", false
	for _, sym := range currencySymbols {
		if rest, ok := strings.CutPrefix(body, sym); ok {
			symbol, prefix, body = sym, true, strings.TrimPrefix(strings.TrimPrefix(rest, " "), "\u00a0")
			break
		}
		if rest, ok := strings.CutSuffix(body, sym); ok {
			symbol, body = sym, strings.TrimSuffix(strings.TrimSuffix(rest, " "), "\u00a0")
			break
		}
	}
	if symbol == "" {
		return cell{}, false
	}
	if m, rest := cutMinus(body); m {
		if neg {
			return cell{}, false
		}
		neg, body = true, rest
	}
	n, ok := parseAmount(body)
	if !ok {
		return cell{}, false
	}
	number := "#,##0" + decimalsFormat(n.decimals)
	format := `"` + symbol + `"` + number
	if !prefix {
		format = number + ` "` + symbol + `"`
	}
	return cell{kind: kindNumber, num: n.signed(neg), format: format, width: utf8.RuneCountInString(s)}, true
}

// parseAmount reads the number of an amount of money, whose separators
// may be either way round.
func parseAmount(s string) (decimal, bool) {
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	switch {
	case lastDot >= 0 && lastComma >= 0:
		if lastDot > lastComma {
			return parseDecimal(s, ',', '.')
		}
		return parseDecimal(s, '.', ',')
	case lastComma >= 0:
		if strings.Count(s, ",") == 1 && len(s)-lastComma-1 <= 2 {
			return parseDecimal(s, 0, ',')
		}
		return parseDecimal(s, ',', 0)
	case strings.Count(s, ".") > 1:
		return parseDecimal(s, '.', 0)
	}
	return parseDecimal(s, 0, '.')
}

// decimal is a parsed decimal number without its sign.
type decimal struct {
	value    float64
	digits   string // integer and fraction as "123.45", separators removed
	decimals int    // digits after the decimal separator
	grouped  bool   // thousands separators were written
}

func (d decimal) signed(neg bool) float64 {
	if neg && d.value != 0 {
		return -d.value
	}
	return d.value
}

// maxSignificantDigits is what a float64, and so Excel, keeps exactly.
const maxSignificantDigits = 15

// parseDecimal reads unsigned digits with an optional group separator
// (in groups of three) and an optional decimal separator; a zero byte
// disables either. The integer part has no leading zero unless it is "0".
func parseDecimal(s string, group, dec byte) (decimal, bool) {
	intPart, frac, hasFrac := s, "", false
	if dec != 0 {
		if i := strings.IndexByte(s, dec); i >= 0 {
			intPart, frac, hasFrac = s[:i], s[i+1:], true
			if frac == "" || !allDigits(frac) {
				return decimal{}, false
			}
		}
	}
	var d decimal
	if group != 0 && strings.IndexByte(intPart, group) >= 0 {
		groups := strings.Split(intPart, string(group))
		if len(groups[0]) < 1 || len(groups[0]) > 3 {
			return decimal{}, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return decimal{}, false
			}
		}
		intPart, d.grouped = strings.Join(groups, ""), true
	}
	if intPart == "" || !allDigits(intPart) || (len(intPart) > 1 && intPart[0] == '0') {
		return decimal{}, false
	}
	if significantDigits(intPart, frac) > maxSignificantDigits {
		return decimal{}, false
	}
	d.digits = intPart
	if hasFrac {
		d.digits += "." + frac
		d.decimals = len(frac)
	}
	v, err := strconv.ParseFloat(d.digits, 64)
	if err != nil {
		return decimal{}, false
	}
	d.value = v
	return d, true
}

// significantDigits counts the digits from the first non-zero one on.
func significantDigits(intPart, frac string) int {
	return len(strings.TrimLeft(intPart+frac, "0"))
}

// cutMinus removes a leading ASCII hyphen-minus or Unicode minus sign.
func cutMinus(s string) (bool, string) {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return true, rest
	}
	if rest, ok := strings.CutPrefix(s, "\u2212"); ok {
		return true, rest
	}
	return false, s
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// decimalsFormat is the fraction part of a number format with n digits,
// at most Excel's 30.
func decimalsFormat(n int) string {
	if n <= 0 {
		return ""
	}
	return "." + strings.Repeat("0", min(n, 30))
}

// generalWidth is how wide a number in the General format shows: Excel
// rounds General numbers to about eleven characters.
func generalWidth(s string) int {
	return min(len(s), 11)
}

// decodeString reads a JSON string, without the cost of encoding/json
// for the common case of a string with no escapes.
func decodeString(raw json.RawMessage) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		plain := utf8.Valid(inner)
		for _, b := range inner {
			if b == '\\' || b == '"' || b < 0x20 {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), true
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// cleanText makes s fit for a cell: line breaks become "\n", which is
// what Excel stores, and characters XML 1.0 cannot carry (other control
// characters, U+FFFE, U+FFFF) are dropped.
func cleanText(s string) string {
	if !needsCleaning(s) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r == '\n' || r == '\t':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}

// cleanFormula drops what cleanText drops and line breaks too, which a
// formula does not need.
func cleanFormula(s string) string {
	if !needsCleaning(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}

func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0xEF {
			return true
		}
	}
	return false
}

// textWidth is the display width of the widest line of s, counting East
// Asian wide characters twice.
func textWidth(s string) int {
	widest, w := 0, 0
	for _, r := range s {
		if r == '\n' {
			widest, w = max(widest, w), 0
			continue
		}
		w += runeWidth(r)
	}
	return max(widest, w)
}

func runeWidth(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115F, // Hangul Jamo
		r >= 0x2E80 && r <= 0xA4CF && r != 0x303F, // CJK, Kana, Yi
		r >= 0xAC00 && r <= 0xD7A3,                // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF,                // CJK compatibility
		r >= 0xFE30 && r <= 0xFE4F,                // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFF60,                // fullwidth forms
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1FAFF, // emoji
		r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}
