package xlsx

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/xuri/excelize/v2"
)

// evalSheet is the data the evaluator's tests compute over: a header,
// regions, amounts, ratios, a text number, booleans and an empty cell.
func evalSheets(t testing.TB) ([]string, [][][]cell) {
	rows := [][]json.RawMessage{
		cells(t, "Region", "Units", "Price", "Paid", "Note"),
		cells(t, "North", 12, "$489.00", true, "12"),
		cells(t, "South", 30, "$249.50", false, "x"),
		cells(t, "north", 45, "$89.99", true, nil),
		cells(t, "East", nil, "$19.75", true, "a b  c"),
	}
	other := [][]json.RawMessage{
		cells(t, "Key", "Value"),
		cells(t, "a", 2.5),
	}
	grids := make([][][]cell, 2)
	for i, rs := range [][][]json.RawMessage{rows, other} {
		g, err := classifySheet(context.Background(), Sheet{Rows: rs})
		if err != nil {
			t.Fatal(err)
		}
		grids[i] = g
	}
	return []string{"Data", "Other sheet"}, grids
}

// evalOne computes formula as if written in F2 of the first sheet.
func evalOne(t testing.TB, formula string) cell {
	t.Helper()
	names, grids := evalSheets(t)
	for len(grids[0][1]) < 6 {
		grids[0][1] = append(grids[0][1], cell{})
	}
	grids[0][1][5] = cell{kind: kindFormula, text: formula}
	newEvaluator(names, grids).run()
	return grids[0][1][5]
}

func TestEvaluator(t *testing.T) {
	tests := []struct {
		formula string
		want    any // float64, string, bool; nil for an Excel error
		calc    uint8
	}{
		{"B2*C2", 12 * 489.0, calcDone},
		{"SUM(B2:B5)", 87.0, calcDone},
		{"SUM(B:B)", 87.0, calcDone},
		{"AVERAGE(B2:B5)", 29.0, calcDone},
		{"MIN(B2:B5)+MAX(C2:C5)", 12 + 489.0, calcDone},
		{"COUNT(B2:B5)", 3.0, calcDone},
		{"COUNTA(A2:A5,E2:E5)", 7.0, calcDone},
		{"COUNTIF(A2:A5,\"North\")", 2.0, calcDone},
		{"COUNTIF(B2:B5,\">20\")", 2.0, calcDone},
		{"SUMIF(A2:A5,A2,B2:B5)", 57.0, calcDone},
		{"AVERAGEIF(A2:A5,\"<>North\",B2:B5)", 30.0, calcDone},
		{"SUMPRODUCT(B2:B5,C2:C5)", 12*489.0 + 30*249.5 + 45*89.99, calcDone},
		{"-2^2", 4.0, calcDone},
		{"2+3*4^2/8-1", 7.0, calcDone},
		{"50%*B2", 6.0, calcDone},
		{"B2/0", nil, calcError},
		{"IF(B5=0,0,C5/B5)", 0.0, calcDone},
		{"IF(B2>10,\"big\")", "big", calcDone},
		{"IF(B2>100,\"big\")", false, calcDone},
		{"IFERROR(C2/B5,\"n/a\")", "n/a", calcDone},
		{"IFERROR(C2/B2,-1)", 489.0 / 12, calcDone},
		{"ROUND(2.675,2)", 2.68, calcDone},
		{"ROUND(-1234.5,-2)", -1200.0, calcDone},
		{"ROUNDUP(1.21,1)+ROUNDDOWN(-1.29,1)", 1.3 - 1.2, calcDone},
		{"MOD(-7,3)", 2.0, calcDone},
		{"A2&\" \"&B2&\" \"&D2", "North 12 TRUE", calcDone},
		{"CONCATENATE(A2,\"-\",C4)", "North-89.99", calcDone},
		{"LEN(TRIM(E5))", 5.0, calcDone},
		{"AND(D2:D5)", false, calcDone},
		{"OR(B2>100,D2)", true, calcDone},
		{"NOT(D3)", true, calcDone},
		{"E2*2", 24.0, calcDone},
		{"E3*2", nil, calcError},
		{"'Other sheet'!B2*2", 5.0, calcDone},
		{"B5", 0.0, calcDone},
		{"\"North\"=A4", true, calcDone},
		{"VLOOKUP(A2,A2:B5,2,FALSE)", nil, calcUnknown},
		{"SUMIF(A2:A5,\"N*\",B2:B5)", nil, calcUnknown},
		{"Missing!A1", nil, calcUnknown},
		{"F2+1", nil, calcCircular},
		{"SUM(B2:B5", nil, calcUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.formula, func(t *testing.T) {
			got := evalOne(t, tt.formula)
			if got.calc != tt.calc {
				t.Fatalf("state %d, want %d (value %v)", got.calc, tt.calc, got.cached)
			}
			if w, ok := tt.want.(float64); ok {
				g, ok := got.cached.(float64)
				if !ok || math.Abs(g-w) > 1e-9 {
					t.Fatalf("value %v, want %v", got.cached, w)
				}
				return
			}
			if got.cached != tt.want {
				t.Fatalf("value %#v, want %#v", got.cached, tt.want)
			}
		})
	}
}

// TestEvaluatorAgreesWithFormulaLibrary computes each formula both ways
// where the library knows the answer.
func TestEvaluatorAgreesWithFormulaLibrary(t *testing.T) {
	formulas := []string{
		"B2*C2*(1-0.05)", "SUM(B2:B5)/COUNT(B2:B5)", "SUMIF(A2:A5,\"north\",C2:C5)",
		"COUNTIF(C2:C5,\"<=249.5\")", "ROUND(C4*3,1)", "MAX(C2:C5)-MIN(C2:C5)", "A3&B3",
		"IF(AND(B2>10,D2),C2,0)", "PRODUCT(B2:B3)", "INT(-2.5)", "ABS(-3)+SQRT(16)",
	}
	for _, formula := range formulas {
		t.Run(formula, func(t *testing.T) {
			got := evalOne(t, formula)
			names, grids := evalSheets(t)
			f := excelize.NewFile()
			defer f.Close()
			_ = f.SetSheetName("Sheet1", names[0])
			_, _ = f.NewSheet(names[1])
			for i, name := range names {
				for r, row := range grids[i] {
					for c, cl := range row {
						setScratchCell(f, name, cellName(c, r), cl)
					}
				}
			}
			_ = f.SetCellFormula(names[0], "F2", formula)
			lib, err := f.CalcCellValue(names[0], "F2", excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatal(err)
			}
			want := cachedValue(lib)
			if w, ok := want.(float64); ok {
				if g, ok := got.cached.(float64); !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Fatalf("evaluator %v, library %v", got.cached, w)
				}
				return
			}
			if got.cached != want {
				t.Fatalf("evaluator %#v, library %#v", got.cached, want)
			}
		})
	}
}

// TestEvaluatorIsBounded stops at its cell budget, leaving the rest
// uncomputed rather than taking unbounded time.
func TestEvaluatorIsBounded(t *testing.T) {
	rows := [][]json.RawMessage{cells(t, "n", "total")}
	for i := range 5000 {
		rows = append(rows, cells(t, i, "=SUM(A$2:A$6000)"))
	}
	g, err := classifySheet(context.Background(), Sheet{Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	unknown := newEvaluator([]string{"a"}, [][][]cell{g}).run()
	if unknown == 0 || unknown == 5000 {
		t.Fatalf("%d of 5000 formulas not computed, want some computed and the rest not", unknown)
	}
	if v, _ := g[1][1].cached.(float64); v != 4999*5000/2 {
		t.Fatalf("first total = %v", g[1][1].cached)
	}
}

// FuzzEvaluator checks that no formula makes the evaluator panic or run
// away, and that what it computes is a value Excel can cache.
func FuzzEvaluator(f *testing.F) {
	for _, s := range []string{"SUM(B2:B5)*2", "IF(B5=0,0,C5/B5)", `A2&"x"`, "-2^2%", "SUMIF(A2:A5,\">1\",B2:B5)", "'Other sheet'!B2", "B:B", "IFERROR(1/0,)", "((1", "ROUND(1,-400)", "MOD(1,0)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, formula string) {
		if len(formula) > 300 {
			return
		}
		got := evalOne(t, formula)
		if got.calc == calcDone {
			switch v := got.cached.(type) {
			case float64:
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%q cached %v", formula, v)
				}
			case string, bool:
			default:
				t.Fatalf("%q cached %T", formula, got.cached)
			}
		}
	})
}
