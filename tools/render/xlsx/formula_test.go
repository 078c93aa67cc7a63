package xlsx

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

func TestScanFormula(t *testing.T) {
	tests := []struct {
		name     string
		formula  string
		volatile bool
		err      string
	}{
		{name: "plain", formula: "SUM(A1:A3)*2"},
		{name: "nested", formula: "IF(AND(A1>0,B1<2),{1,2;3,4},\"x\")"},
		{name: "quoted parenthesis", formula: `"(" & A1`},
		{name: "doubled quote", formula: `"say ""hi"""`},
		{name: "quoted sheet", formula: `'It''s (here)'!A1+1`},
		{name: "structured reference", formula: "SUM(Table1[Amount])"},
		{name: "volatile", formula: "TODAY()-A1", volatile: true},
		{name: "volatile lower case", formula: "rand()", volatile: true},
		{name: "volatile name inside text", formula: `"TODAY()"`},
		{name: "function ending like volatile", formula: "XNOW(1)"},
		{name: "unclosed parenthesis", formula: "SUM(A1", err: "an opening ( is not closed"},
		{name: "extra parenthesis", formula: "SUM(A1))", err: "a closing ) has no opening ("},
		{name: "crossed brackets", formula: "SUM({1,2)}", err: "a closing ) has no opening ("},
		{name: "unclosed string", formula: `"abc`, err: "double quotes is not closed"},
		{name: "unclosed sheet name", formula: `'Sheet 1!A1`, err: "single quotes is not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			volatile, err := scanFormula(tt.formula)
			if volatile != tt.volatile {
				t.Errorf("volatile = %v, want %v", volatile, tt.volatile)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error = %v, want none", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestScanReferences(t *testing.T) {
	tests := []struct {
		name    string
		formula string
		refs    []reference
		funcs   []string
		divides bool
	}{
		{name: "cells", formula: "B2*$C$3", refs: []reference{{col1: 1, row1: 1, col2: 1, row2: 1}, {col1: 2, row1: 2, col2: 2, row2: 2}}},
		{name: "range", formula: "SUM(C10:A2)", refs: []reference{{col1: 0, row1: 1, col2: 2, row2: 9}}, funcs: []string{"SUM"}},
		{name: "sheet", formula: "Orders!G2+'My data'!A1", refs: []reference{{sheet: "Orders", col1: 6, row1: 1, col2: 6, row2: 1}, {sheet: "My data"}}},
		{name: "function that looks like a cell", formula: "LOG10(A1)", refs: []reference{{}}, funcs: []string{"LOG10"}},
		{name: "text is not a reference", formula: `"A1"&B1`, refs: []reference{{col1: 1, col2: 1}}},
		{name: "division", formula: "A1/B1", refs: []reference{{}, {col1: 1, col2: 1}}, divides: true},
		{name: "names and whole columns are not references", formula: "SUM(A:A)+Total", funcs: []string{"SUM"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs, funcs, divides := scanReferences(tt.formula)
			if !reflect.DeepEqual(refs, tt.refs) || !reflect.DeepEqual(funcs, tt.funcs) || divides != tt.divides {
				t.Fatalf("scanReferences(%q) = %+v %q %v, want %+v %q %v", tt.formula, refs, funcs, divides, tt.refs, tt.funcs, tt.divides)
			}
		})
	}
}

func TestFormulaFormats(t *testing.T) {
	grid := [][]cell{
		{headerCell(json.RawMessage(`"h"`))},
		{classifyBody(json.RawMessage(`"$2.50"`)), classifyBody(json.RawMessage(`4`)), classifyBody(json.RawMessage(`"10%"`)), classifyBody(json.RawMessage(`"2026-03-01"`)), classifyBody(json.RawMessage(`"5%"`))},
	}
	tests := []struct {
		name    string
		formula string
		want    string
	}{
		{name: "money times count is money", formula: "A2*B2", want: `"$"#,##0.00`},
		{name: "money times percent is money", formula: "A2*(1-C2)", want: `"$"#,##0.00`},
		{name: "percent plus percent is percent", formula: "C2+E2", want: "0%"},
		{name: "count times percent is unknown", formula: "B2*C2", want: ""},
		{name: "division changes units", formula: "A2/B2", want: ""},
		{name: "counting changes units", formula: "COUNT(A2:A9)", want: ""},
		{name: "date arithmetic is unknown", formula: "D2+7", want: ""},
		{name: "unknown sheet", formula: "Other!A2", want: ""},
		{name: "own sheet by name", formula: "'Data'!A2*2", want: `"$"#,##0.00`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := referencedFormat(tt.formula, 0, map[string]int{"data": 0}, [][][]cell{grid})
			if got != tt.want {
				t.Fatalf("referencedFormat(%q) = %q, want %q", tt.formula, got, tt.want)
			}
		})
	}
}

func TestCachingIsBounded(t *testing.T) {
	tests := []struct {
		name    string
		formula string
		cached  bool
	}{
		{name: "small range", formula: "=SUM(A1:A2)", cached: true},
		{name: "large range over a small sheet", formula: "=SUM(A1:A100000)", cached: true},
		{name: "range over itself", formula: "=SUM(A1:C9)"},
		{name: "range past the budget of the formula library", formula: "=SUMIF(A1:C100000,\"a*\")"},
		{name: "range past the grid", formula: "=SUM(A1:A9999999)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wb := Workbook{Title: "x", Sheets: []Sheet{{Name: "a", Rows: [][]json.RawMessage{cells(t, 1), cells(t, 2, tt.formula)}}}}
			f, _ := openRendered(t, wb)
			v, _ := f.GetCellValue("a", "B2", excelize.Options{RawCellValue: true})
			if cached := v != ""; cached != tt.cached {
				t.Fatalf("B2 cached %q, want cached = %v", v, tt.cached)
			}
			if formula, _ := f.GetCellFormula("a", "B2"); formula != tt.formula[1:] {
				t.Fatalf("B2 formula = %q, want %q", formula, tt.formula[1:])
			}
		})
	}
}

func TestRenameSheets(t *testing.T) {
	rename := map[string]string{"q1/q2": "Q1-Q2", "raw data": "Raw data (2)", "o'brien": "O’Brien"}
	tests := []struct {
		name    string
		formula string
		want    string
	}{
		{name: "quoted", formula: "SUM('Q1/Q2'!A1:A3)", want: "SUM('Q1-Q2'!A1:A3)"},
		{name: "ignoring case", formula: "'raw DATA'!B2*2", want: "'Raw data (2)'!B2*2"},
		{name: "doubled apostrophe", formula: "'O''Brien'!A1", want: "'O’Brien'!A1"},
		{name: "unchanged sheet", formula: "Orders!A1+'Other'!B1", want: "Orders!A1+'Other'!B1"},
		{name: "text untouched", formula: `"'Q1/Q2'!A1"&A1`, want: `"'Q1/Q2'!A1"&A1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renameSheets(tt.formula, rename); got != tt.want {
				t.Fatalf("renameSheets(%q) = %q, want %q", tt.formula, got, tt.want)
			}
		})
	}
}

func TestRenderRenamesSheetsInFormulas(t *testing.T) {
	wb := Workbook{Title: "x", Sheets: []Sheet{
		{Name: "Q1/Q2", Rows: [][]json.RawMessage{cells(t, "h"), cells(t, 5)}},
		{Name: "Sum", Rows: [][]json.RawMessage{cells(t, "h"), cells(t, "='Q1/Q2'!A2*2")}},
	}}
	f, _ := openRendered(t, wb)
	formula, _ := f.GetCellFormula("Sum", "A2")
	value, _ := f.GetCellValue("Sum", "A2", excelize.Options{RawCellValue: true})
	if formula != "'Q1-Q2'!A2*2" || value != "10" {
		t.Fatalf("A2 = %q cached %q, want 'Q1-Q2'!A2*2 cached 10", formula, value)
	}
}
