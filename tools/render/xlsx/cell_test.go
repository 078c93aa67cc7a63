package xlsx

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestClassifyBody(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		kind   kind
		num    float64
		text   string
		format string
	}{
		{name: "integer", raw: `42`, kind: kindNumber, num: 42},
		{name: "float", raw: `-0.125`, kind: kindNumber, num: -0.125},
		{name: "exponent", raw: `1.5e3`, kind: kindNumber, num: 1500},
		{name: "negative zero", raw: `-0`, kind: kindNumber, num: 0},
		{name: "true", raw: `true`, kind: kindBool, num: 1},
		{name: "false", raw: `false`, kind: kindBool, num: 0},
		{name: "null", raw: `null`, kind: kindEmpty},
		{name: "nil", raw: ``, kind: kindEmpty},
		{name: "empty string", raw: `""`, kind: kindEmpty},
		{name: "text", raw: `"North"`, kind: kindText, text: "North"},
		{name: "escaped text", raw: `"a\"b\nc"`, kind: kindText, text: "a\"b\nc"},
		{name: "control characters dropped", raw: `"a\u0001b\r\nc"`, kind: kindText, text: "ab\nc"},
		{name: "formula", raw: `"=SUM(A1:A3)"`, kind: kindFormula, text: "SUM(A1:A3)"},
		{name: "lone equals", raw: `"="`, kind: kindText, text: "="},
		{name: "rule of equals", raw: `"=== Totals ==="`, kind: kindText, text: "=== Totals ==="},
		{name: "escaped formula", raw: `"'=A1"`, kind: kindText, text: "=A1"},
		{name: "escaped date", raw: `"'2026-03-01"`, kind: kindText, text: "2026-03-01"},
		{name: "apostrophe kept on text", raw: `"'90s"`, kind: kindText, text: "'90s"},
		{name: "date", raw: `"2026-03-01"`, kind: kindNumber, num: 46082, format: formatDate},
		{name: "first date", raw: `"1900-03-01"`, kind: kindNumber, num: 61, format: formatDate},
		{name: "date before 1900-03", raw: `"1900-02-28"`, kind: kindText, text: "1900-02-28"},
		{name: "impossible date", raw: `"2026-02-30"`, kind: kindText, text: "2026-02-30"},
		{name: "datetime", raw: `"2026-03-01T14:30"`, kind: kindNumber, num: 46082 + 14.5/24, format: "yyyy-mm-dd hh:mm"},
		{name: "datetime utc", raw: `"2026-03-01T14:30:00Z"`, kind: kindNumber, num: 46082 + 14.5/24, format: "yyyy-mm-dd hh:mm:ss"},
		{name: "datetime offset kept as written", raw: `"2026-03-01 14:30:00+02:00"`, kind: kindNumber, num: 46082 + 14.5/24, format: "yyyy-mm-dd hh:mm:ss"},
		{name: "datetime fraction", raw: `"2026-03-01T00:00:00.5"`, kind: kindNumber, num: 46082 + 0.5/86400, format: "yyyy-mm-dd hh:mm:ss.000"},
		{name: "bad zone", raw: `"2026-03-01T14:30+2"`, kind: kindText, text: "2026-03-01T14:30+2"},
		{name: "time", raw: `"14:30"`, kind: kindNumber, num: 14.5 / 24, format: "hh:mm"},
		{name: "time seconds", raw: `"06:00:30"`, kind: kindNumber, num: (6*3600 + 30) / 86400.0, format: "hh:mm:ss"},
		{name: "bad time", raw: `"24:00"`, kind: kindText, text: "24:00"},
		{name: "percent", raw: `"12.5%"`, kind: kindNumber, num: 0.125, format: "0.0%"},
		{name: "percent exact", raw: `"0.07%"`, kind: kindNumber, num: 0.0007, format: "0.00%"},
		{name: "negative percent", raw: `"-3 %"`, kind: kindNumber, num: -0.03, format: "0%"},
		{name: "dollars", raw: `"$1,234.50"`, kind: kindNumber, num: 1234.5, format: `"$"#,##0.00`},
		{name: "negative dollars", raw: `"-$5"`, kind: kindNumber, num: -5, format: `"$"#,##0`},
		{name: "dollars minus after", raw: `"$-5.25"`, kind: kindNumber, num: -5.25, format: `"$"#,##0.00`},
		{name: "accounting negative", raw: `"($5.00)"`, kind: kindNumber, num: -5, format: `"$"#,##0.00`},
		{name: "euro european", raw: `"€1.234,50"`, kind: kindNumber, num: 1234.5, format: `"€"#,##0.00`},
		{name: "euro suffix", raw: `"1.234,50 €"`, kind: kindNumber, num: 1234.5, format: `#,##0.00 "€"`},
		{name: "euro decimal comma", raw: `"€12,5"`, kind: kindNumber, num: 12.5, format: `"€"#,##0.0`},
		{name: "euro thousands", raw: `"€1.234.567"`, kind: kindNumber, num: 1234567, format: `"€"#,##0`},
		{name: "pounds", raw: `"£12"`, kind: kindNumber, num: 12, format: `"£"#,##0`},
		{name: "double negative money", raw: `"-($5)"`, kind: kindText, text: "-($5)"},
		{name: "money with bad groups", raw: `"$1,23,4"`, kind: kindText, text: "$1,23,4"},
		{name: "plain number string", raw: `"1234"`, kind: kindNumber, num: 1234},
		{name: "decimals kept", raw: `"3.50"`, kind: kindNumber, num: 3.5, format: "0.00"},
		{name: "grouped", raw: `"1,234,567.89"`, kind: kindNumber, num: 1234567.89, format: "#,##0.00"},
		{name: "padded number", raw: `" 42 "`, kind: kindNumber, num: 42},
		{name: "zero", raw: `"0"`, kind: kindNumber, num: 0},
		{name: "zero point", raw: `"0.5"`, kind: kindNumber, num: 0.5, format: "0.0"},
		{name: "leading zeros", raw: `"007"`, kind: kindText, text: "007"},
		{name: "zip code", raw: `"02134"`, kind: kindText, text: "02134"},
		{name: "phone", raw: `"+1 555 0100"`, kind: kindText, text: "+1 555 0100"},
		{name: "plus sign", raw: `"+5"`, kind: kindText, text: "+5"},
		{name: "card number", raw: `"4111111111111111"`, kind: kindText, text: "4111111111111111"},
		{name: "fifteen digits", raw: `"123456789012345"`, kind: kindNumber, num: 123456789012345},
		{name: "exponent string", raw: `"1e5"`, kind: kindText, text: "1e5"},
		{name: "decimal comma without currency", raw: `"1,5"`, kind: kindText, text: "1,5"},
		{name: "trailing dot", raw: `"5."`, kind: kindText, text: "5."},
		{name: "version", raw: `"1.2.3"`, kind: kindText, text: "1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classifyBody(json.RawMessage(tt.raw))
			if got.kind != tt.kind || got.text != tt.text || got.format != tt.format {
				t.Fatalf("classifyBody(%s) = kind %d text %q format %q; want kind %d text %q format %q",
					tt.raw, got.kind, got.text, got.format, tt.kind, tt.text, tt.format)
			}
			if math.Abs(got.num-tt.num) > 1e-9 || got.num == 0 && math.Signbit(got.num) {
				t.Fatalf("classifyBody(%s).num = %v, want %v", tt.raw, got.num, tt.num)
			}
		})
	}
}

func TestHeaderCellIsText(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{name: "year", raw: `2026`, want: "2026"},
		{name: "formula-like", raw: `"=Total"`, want: "=Total"},
		{name: "date-like", raw: `"2026-03-01"`, want: "2026-03-01"},
		{name: "boolean", raw: `true`, want: "TRUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := headerCell(json.RawMessage(tt.raw))
			if got.kind != kindText || got.text != tt.want {
				t.Fatalf("headerCell(%s) = kind %d %q, want text %q", tt.raw, got.kind, got.text, tt.want)
			}
		})
	}
	if got := headerCell(json.RawMessage(`null`)); got.kind != kindEmpty {
		t.Fatalf("headerCell(null) = kind %d, want empty", got.kind)
	}
}

func TestTextWidth(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{name: "ascii", s: "North", want: 5},
		{name: "accents", s: "Münster", want: 7},
		{name: "cjk counts double", s: "東京都", want: 6},
		{name: "widest line", s: "ab\nabcd\nabc", want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textWidth(tt.s); got != tt.want {
				t.Fatalf("textWidth(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}

func TestRowHeight(t *testing.T) {
	l := layout{widths: []float64{20, maxColumnWidth}}
	text := func(s string) cell { return cell{kind: kindText, text: s, width: textWidth(s)} }
	tests := []struct {
		name   string
		row    []cell
		header bool
		want   float64
	}{
		{name: "one line", row: []cell{text("short"), text("short")}, want: 0},
		{name: "line breaks", row: []cell{text("a\nb\nc")}, want: 3 * lineHeight},
		{name: "long text wraps at the column width", row: []cell{{}, text(strings.Repeat("x", 2*(maxColumnWidth-cellPadding)+1))}, want: 3 * lineHeight},
		{name: "tallest cell wins", row: []cell{text("a\nb"), text("a\nb\nc\nd")}, want: 4 * lineHeight},
		{name: "capped", row: []cell{text(strings.Repeat("a\n", 100))}, want: maxRowHeight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rowHeight(tt.row, tt.header, l); got != tt.want {
				t.Fatalf("rowHeight = %v, want %v", got, tt.want)
			}
		})
	}
}
