package xlsx

import (
	"context"
	"encoding/json"
	"testing"
)

// settled classifies rows (the first a header), computes and settles
// their formats, and returns the grid.
func settled(t *testing.T, rows ...[]json.RawMessage) [][]cell {
	t.Helper()
	g, err := classifySheet(context.Background(), Sheet{Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	grids := [][][]cell{g}
	inferFormulaFormats([]string{"a"}, grids)
	if _, err := cacheFormulaValues(context.Background(), []string{"a"}, grids); err != nil {
		t.Fatal(err)
	}
	settleColumnFormats(grids)
	return g
}

func TestColumnFormats(t *testing.T) {
	tests := []struct {
		name string
		rows [][]json.RawMessage
		col  int
		want []string // formats of the body rows
	}{
		{
			name: "ratio formulas are percentages",
			rows: [][]json.RawMessage{cells(t, "Revenue", "Share of revenue"), cells(t, 300, "=A2/SUM(A$2:A$3)"), cells(t, 700, "=A3/SUM(A$2:A$3)")},
			col:  1, want: []string{"0.0%", "0.0%"},
		},
		{
			name: "tiny shares get the decimals to show them",
			rows: [][]json.RawMessage{cells(t, "Net", "Share"), cells(t, 3, "=A2/A$4"), cells(t, 4, "=A3/A$4"), cells(t, 9000, nil)},
			col:  1, want: []string{"0.00%", "0.00%"},
		},
		{
			name: "growth above 100% is a percentage too",
			rows: [][]json.RawMessage{cells(t, "Q1", "Q2", "Growth"), cells(t, 10, 35, "=(B2-A2)/A2"), cells(t, 10, 12, "=(B3-A3)/A3")},
			col:  2, want: []string{"0.0%", "0.0%"},
		},
		{
			name: "a price per unit is no percentage",
			rows: [][]json.RawMessage{cells(t, "Revenue", "Units", "Price per unit"), cells(t, 1000, 3, "=A2/B2"), cells(t, 50, 7, "=A3/B3")},
			col:  2, want: []string{"0.00", "0.00"},
		},
		{
			name: "JSON numbers beside amounts become amounts",
			rows: [][]json.RawMessage{cells(t, "Amount"), cells(t, "$1,250.50"), cells(t, 980), cells(t, "$12")},
			col:  0, want: []string{`"$"#,##0.00`, `"$"#,##0.00`, `"$"#,##0.00`},
		},
		{
			name: "one decimal count per column",
			rows: [][]json.RawMessage{cells(t, "Weight"), cells(t, 1.5), cells(t, "2.25"), cells(t, 3)},
			col:  0, want: []string{"0.00", "0.00", "0.00"},
		},
		{
			name: "thousands separators for large numbers",
			rows: [][]json.RawMessage{cells(t, "Visitors"), cells(t, 125000), cells(t, 980), cells(t, "=SUM(A2:A3)")},
			col:  0, want: []string{"#,##0", "#,##0", "#,##0"},
		},
		{
			name: "no separators in years and ids",
			rows: [][]json.RawMessage{cells(t, "Customer ID"), cells(t, 100234), cells(t, 100235)},
			col:  0, want: []string{"", ""},
		},
		{
			name: "years stay plain",
			rows: [][]json.RawMessage{cells(t, "Founded"), cells(t, 1998), cells(t, 2024)},
			col:  0, want: []string{"", ""},
		},
		{
			name: "small counts stay General",
			rows: [][]json.RawMessage{cells(t, "Units"), cells(t, 12), cells(t, 30)},
			col:  0, want: []string{"", ""},
		},
		{
			name: "long ratios written as JSON numbers get four decimals at most",
			rows: [][]json.RawMessage{cells(t, "Rate"), cells(t, 0.6958059566), cells(t, 1.25)},
			col:  0, want: []string{"0.0000", "0.0000"},
		},
		{
			name: "mixed currencies keep their symbols and share decimals",
			rows: [][]json.RawMessage{cells(t, "Fee"), cells(t, "€1.234,50"), cells(t, "£1,050"), cells(t, "€980,00")},
			col:  0, want: []string{`"€"#,##0.00`, `"£"#,##0.00`, `"€"#,##0.00`},
		},
		{
			name: "date arithmetic under a date header shows dates",
			rows: [][]json.RawMessage{cells(t, "Invoiced", "Due date"), cells(t, "2026-03-01", "=A2+30"), cells(t, "2026-03-15", "=A3+30")},
			col:  1, want: []string{formatDate, formatDate},
		},
		{
			name: "days between dates stay numbers",
			rows: [][]json.RawMessage{cells(t, "From", "To", "Days"), cells(t, "2026-03-01", "2026-03-31", "=B2-A2"), cells(t, "2026-03-15", "2026-04-01", "=B3-A3")},
			col:  2, want: []string{"0", "0"},
		},
		{
			name: "dates are left alone",
			rows: [][]json.RawMessage{cells(t, "Day"), cells(t, "2026-03-01"), cells(t, "2026-03-02")},
			col:  0, want: []string{formatDate, formatDate},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := settled(t, tt.rows...)
			for i, want := range tt.want {
				if got := g[i+1][tt.col].format; got != want {
					t.Errorf("row %d format %q, want %q", i+2, got, want)
				}
			}
		})
	}
}

func TestTotalsRow(t *testing.T) {
	tests := []struct {
		name string
		rows [][]json.RawMessage
		want int
	}{
		{"labelled", [][]json.RawMessage{cells(t, "a", "b"), cells(t, "x", 1), cells(t, "y", 2), cells(t, "Total", "=SUM(B2:B3)")}, 3},
		{"grand total with colon", [][]json.RawMessage{cells(t, "a", "b"), cells(t, "x", 1), cells(t, "y", 2), cells(t, "Grand total:", 3)}, 3},
		{"unlabelled sums", [][]json.RawMessage{cells(t, "a", "b"), cells(t, 1, 1), cells(t, 2, 2), cells(t, "=SUM(A2:A3)", "=SUM(B2:B3)")}, 3},
		{"a data row", [][]json.RawMessage{cells(t, "a", "b"), cells(t, "x", 1), cells(t, "y", 2), cells(t, "Totally", 3)}, -1},
		{"per-row formulas", [][]json.RawMessage{cells(t, "a", "b"), cells(t, 1, "=A2*2"), cells(t, 2, "=A3*2"), cells(t, 3, "=A4*2")}, -1},
		{"too short", [][]json.RawMessage{cells(t, "a", "b"), cells(t, "x", 1), cells(t, "Total", 1)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := classifySheet(context.Background(), Sheet{Rows: tt.rows})
			if got := totalsRow(g); got != tt.want {
				t.Fatalf("totalsRow = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDivides(t *testing.T) {
	for f, want := range map[string]bool{
		"A1/B1": true, "SUM(A:A)/2": true, `"a/b"&A1`: false, "'Q1/Q2'!A1*2": false, "'Q1/Q2'!A1/2": true, "A1*B1": false, `"open`: false,
	} {
		if got := divides(f); got != want {
			t.Errorf("divides(%q) = %v, want %v", f, got, want)
		}
	}
}

// A column of formulas is as wide as the values they compute, so that
// no viewer shows ### for them.
func TestFormulaColumnsAreWideEnough(t *testing.T) {
	wb := Workbook{Title: "w", Sheets: []Sheet{{Name: "a", Rows: [][]json.RawMessage{
		cells(t, "Price", "Qty", "Amt"),
		cells(t, "$1,234.56", 7000, "=A2*B2"),
		cells(t, "$99.99", 1, "=A3*B3"),
		cells(t, "Total", nil, "=SUM(C2:C3)"),
	}}}}
	f, _ := openRendered(t, wb)
	w, err := f.GetColWidth("a", "C")
	if err != nil {
		t.Fatal(err)
	}
	shown := len("$8,642,019.99") // the total, bold
	if w < float64(shown)*boldScale+cellPadding-0.5 {
		t.Errorf("column C is %v wide, want room for %d characters in bold", w, shown)
	}
	if v, _ := f.GetCellValue("a", "C4"); v != "$8,642,019.99" {
		t.Errorf("C4 shows %q", v)
	}
}
