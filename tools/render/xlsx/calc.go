package xlsx

import (
	"context"
	"math"
	"strconv"

	"github.com/xuri/excelize/v2"
)

// Bounds on computing the cached values of the formulas the evaluator
// cannot compute with the formula library. Beyond them those values are
// left to the spreadsheet application (the workbook asks for a full
// calculation on load either way), so that a large workbook still
// renders quickly. They count cells, not time, so that whether values
// are cached never depends on the machine.
const (
	maxCachedFormulas = 5_000
	maxCachedCells    = 200_000
	// maxReferencedCells bounds the cells the formulas' ranges span, all
	// formulas together: the formula library walks every cell of a range,
	// filled or not, at about a microsecond each.
	maxReferencedCells = 100_000
)

// cacheFormulaValues computes the value of every formula it can, and
// stores it in the cell, so that viewers that do not calculate
// (previews, mobile viewers, libraries reading cached values) show
// numbers instead of blanks. The evaluator (eval.go) computes what it
// reads; the formula library computes the rest, within the bounds above.
// It reports whether the workbook has formulas at all. A workbook calling
// a volatile function gets no cached values: see volatileFunctions.
func cacheFormulaValues(ctx context.Context, names []string, grids [][][]cell) (bool, error) {
	formulas := 0
	for _, grid := range grids {
		for _, row := range grid {
			for _, cl := range row {
				if cl.kind != kindFormula {
					continue
				}
				formulas++
				if volatile, _ := scanFormula(cl.text); volatile {
					return true, nil
				}
			}
		}
	}
	if formulas == 0 {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return true, err
	}
	if newEvaluator(names, grids).run() == 0 {
		return true, nil
	}
	return true, libraryValues(ctx, names, grids)
}

// libraryValues computes, with the formula library, the formulas the
// evaluator left, if they and the workbook are within the bounds.
func libraryValues(ctx context.Context, names []string, grids [][][]cell) error {
	formulas, cells, referenced := 0, 0, 0
	for _, grid := range grids {
		for _, row := range grid {
			cells += len(row)
			for _, cl := range row {
				if cl.kind == kindFormula && cl.calc == calcUnknown {
					formulas++
					referenced += referencedCells(cl.text)
				}
			}
		}
	}
	if formulas > maxCachedFormulas || cells > maxCachedCells || referenced > maxReferencedCells {
		return nil
	}

	f := excelize.NewFile()
	defer f.Close()
	for i, name := range names {
		var err error
		if i == 0 {
			err = f.SetSheetName(f.GetSheetName(0), name)
		} else {
			_, err = f.NewSheet(name)
		}
		if err != nil {
			// Not worth failing the render for: the values are a
			// convenience the application recomputes.
			return nil
		}
		for r, row := range grids[i] {
			for c, cl := range row {
				setScratchCell(f, name, cellName(c, r), cl)
			}
		}
	}
	done := 0
	for i, name := range names {
		for r, row := range grids[i] {
			for c := range row {
				cl := &row[c]
				if cl.kind != kindFormula || cl.calc != calcUnknown {
					continue
				}
				if done%64 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				done++
				v, err := f.CalcCellValue(name, cellName(c, r), excelize.Options{RawCellValue: true})
				if err == nil {
					cl.cached = cachedValue(v)
				}
			}
		}
	}
	return nil
}

// referencedCells counts the cells a formula's A1-style ranges span; a
// range beyond Excel's grid counts as more than any budget.
func referencedCells(formula string) int {
	refs, _, _ := scanReferences(formula)
	n := 0
	for _, r := range refs {
		if r.row2 >= excelize.TotalRows || r.col2 >= excelize.MaxColumns {
			return math.MaxInt32
		}
		n += (r.row2 - r.row1 + 1) * (r.col2 - r.col1 + 1)
		if n > maxReferencedCells {
			return n
		}
	}
	return n
}

// setScratchCell puts a cell's value where CalcCellValue reads it.
func setScratchCell(f *excelize.File, sheet, ref string, cl cell) {
	switch cl.kind {
	case kindNumber:
		_ = f.SetCellFloat(sheet, ref, cl.num, -1, 64)
	case kindBool:
		_ = f.SetCellBool(sheet, ref, cl.num == 1)
	case kindText:
		_ = f.SetCellStr(sheet, ref, cl.text)
	case kindFormula:
		_ = f.SetCellFormula(sheet, ref, cl.text)
	}
}

// cachedValue types what CalcCellValue returns, which is always a
// string. Empty results and error values are left uncached, for the
// application to show its own.
func cachedValue(v string) any {
	switch v {
	case "":
		return nil
	case "TRUE":
		return true
	case "FALSE":
		return false
	}
	if v[0] == '#' {
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	return v
}
