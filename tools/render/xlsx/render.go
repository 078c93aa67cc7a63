package xlsx

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// creator is the author written to the document properties, in place of
// the library's default.
const creator = "Switchyard"

// defaultTime is the document time of a Workbook whose Time is zero.
var defaultTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// ctxCheckRows is how many rows are written between looks at the context.
const ctxCheckRows = 1024

// Render writes wb as an xlsx workbook and returns its bytes. It first
// validates wb (see Workbook.Validate) and returns the *render.SourceError
// that finds. The same Workbook always renders to the same bytes. Render
// stops with ctx's error when ctx is done.
func Render(ctx context.Context, wb Workbook) ([]byte, error) {
	if err := wb.Validate(); err != nil {
		return nil, err
	}
	names := wb.SheetNames()
	grids := make([][][]cell, len(wb.Sheets))
	for i, s := range wb.Sheets {
		g, err := classifySheet(ctx, s)
		if err != nil {
			return nil, err
		}
		grids[i] = g
	}
	renameFormulaSheets(wb, names, grids)
	inferFormulaFormats(names, grids)
	hasFormulas, err := cacheFormulaValues(ctx, names, grids)
	if err != nil {
		return nil, err
	}
	settleColumnFormats(grids)

	f := excelize.NewFile()
	defer f.Close()
	f.SetZipWriter(newSortedZip)
	if err := setProperties(f, wb, hasFormulas); err != nil {
		return nil, err
	}
	st := newStyles(f)
	for i, name := range names {
		if i == 0 {
			err = f.SetSheetName(f.GetSheetName(0), name)
		} else {
			_, err = f.NewSheet(name)
		}
		if err != nil {
			return nil, fmt.Errorf("adding sheet %q: %w", name, err)
		}
		if err := writeSheet(ctx, f, st, name, grids[i]); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, fmt.Errorf("writing workbook: %w", err)
	}
	return buf.Bytes(), nil
}

// renameFormulaSheets points formulas that name a sheet by the name it
// was asked for at the name it was given. Where two sheets were asked
// for by the same name, ignoring case, a formula means the first, as
// Excel would read it.
func renameFormulaSheets(wb Workbook, names []string, grids [][][]cell) {
	rename := map[string]string{}
	seen := map[string]bool{}
	for i, s := range wb.Sheets {
		key := strings.ToLower(s.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		if s.Name != names[i] {
			rename[key] = names[i]
		}
	}
	if len(rename) == 0 {
		return
	}
	for _, grid := range grids {
		for _, row := range grid {
			for c := range row {
				if row[c].kind == kindFormula {
					row[c].text = renameSheets(row[c].text, rename)
				}
			}
		}
	}
}

// setProperties writes the title and fixed times, and asks spreadsheet
// applications to compute formulas when they open the file: cached values
// are missing where they could not be computed here, and may differ from
// Excel's where the formula library differs.
func setProperties(f *excelize.File, wb Workbook, hasFormulas bool) error {
	t := wb.Time
	if t.IsZero() {
		t = defaultTime
	}
	stamp := t.UTC().Format(time.RFC3339)
	err := f.SetDocProps(&excelize.DocProperties{
		Title:          cleanFormula(wb.Title),
		Creator:        creator,
		LastModifiedBy: creator,
		Created:        stamp,
		Modified:       stamp,
	})
	if err != nil {
		return fmt.Errorf("setting document properties: %w", err)
	}
	if hasFormulas {
		fullCalc := true
		if err := f.SetCalcProps(&excelize.CalcPropsOptions{FullCalcOnLoad: &fullCalc}); err != nil {
			return fmt.Errorf("setting calculation properties: %w", err)
		}
	}
	return nil
}

// classifySheet reads a sheet's cells: the first row as header text, the
// rest by the typing rules.
func classifySheet(ctx context.Context, s Sheet) ([][]cell, error) {
	grid := make([][]cell, len(s.Rows))
	for r, row := range s.Rows {
		if r%ctxCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		cells := make([]cell, len(row))
		for c, raw := range row {
			if r == 0 {
				cells[c] = headerCell(raw)
			} else {
				cells[c] = classifyBody(raw)
			}
		}
		grid[r] = cells
	}
	return grid, nil
}

// writeSheet streams one sheet: column widths, the frozen header row, the
// rows, then the autofilter over the header.
func writeSheet(ctx context.Context, f *excelize.File, st *styles, name string, grid [][]cell) error {
	layout := newLayout(grid)
	// Page setup goes first: the stream writer writes the sheet
	// properties, where fit-to-page lives, when it is created.
	if err := setPrinting(f, name, layout, len(grid) > 0); err != nil {
		return err
	}
	// The dimension tells readers the used range before they read the
	// rows; the stream writer would leave the template's "A1".
	if len(grid) > 0 && len(layout.widths) > 0 {
		if err := f.SetSheetDimension(name, "A1:"+cellName(len(layout.widths)-1, len(grid)-1)); err != nil {
			return fmt.Errorf("setting the dimension of sheet %q: %w", name, err)
		}
	}
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		return fmt.Errorf("streaming sheet %q: %w", name, err)
	}
	for c, w := range layout.widths {
		if err := sw.SetColWidth(c+1, c+1, w); err != nil {
			return fmt.Errorf("setting width of column %d: %w", c+1, err)
		}
	}
	if len(grid) > 0 {
		err := sw.SetPanes(&excelize.Panes{
			Freeze:      true,
			YSplit:      1,
			TopLeftCell: "A2",
			ActivePane:  "bottomLeft",
			Selection:   []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
		})
		if err != nil {
			return fmt.Errorf("freezing the header row: %w", err)
		}
	}
	values := make([]any, 0, len(layout.widths))
	for r, row := range grid {
		if r%ctxCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		values = values[:0]
		for c, cl := range row {
			values = append(values, st.value(cl, r, layout, c))
		}
		if r == 0 || r == layout.totals {
			// The header band and the totals rules run across every
			// column, even where the row is shorter than the others.
			for c := len(row); c < len(layout.widths); c++ {
				values = append(values, st.value(cell{}, r, layout, c))
			}
		}
		var opts []excelize.RowOpts
		if h := rowHeight(row, r == 0, layout); h > 0 {
			opts = append(opts, excelize.RowOpts{Height: h})
		}
		if err := sw.SetRow(cellName(0, r), values, opts...); err != nil {
			return fmt.Errorf("writing row %d of sheet %q: %w", r+1, name, err)
		}
	}
	if st.err != nil {
		return fmt.Errorf("creating cell styles: %w", st.err)
	}
	// The autofilter is set after the stream writer has written the
	// sheet's properties, so that excelize's filterMode flag, which tells
	// Excel that rows are already filtered out, stays out of the file.
	// It stops above the totals row, so that sorting keeps the totals
	// at the foot.
	if len(grid) > 0 && len(layout.widths) > 0 {
		lastRow := len(grid) - 1
		if layout.totals > 0 {
			lastRow = layout.totals - 1
		}
		ref := "A1:" + cellName(len(layout.widths)-1, lastRow)
		if err := f.AutoFilter(name, ref, nil); err != nil {
			return fmt.Errorf("adding the autofilter: %w", err)
		}
	}
	if err := sw.Flush(); err != nil {
		return fmt.Errorf("finishing sheet %q: %w", name, err)
	}
	return nil
}

// Page widths in column-width units (about 7.5 points each) that decide
// how a sheet prints: wider than portraitWidth it is printed landscape;
// up to fitWidth it is scaled down, if need be, to fit the page's width;
// wider tables print at full size across pages, since fitting them would
// make the text unreadably small.
const (
	portraitWidth = 80
	fitWidth      = 280
)

// setPrinting sets what printing and PDF export need: the header row
// repeated on every page, and the orientation and scaling above.
func setPrinting(f *excelize.File, name string, l layout, hasHeader bool) error {
	if hasHeader {
		err := f.SetDefinedName(&excelize.DefinedName{
			Name:     "_xlnm.Print_Titles",
			RefersTo: "'" + name + "'!$1:$1",
			Scope:    name,
		})
		if err != nil {
			return fmt.Errorf("setting print titles: %w", err)
		}
	}
	total := 0.0
	for _, w := range l.widths {
		total += w
	}
	opts := &excelize.PageLayoutOptions{}
	if total > portraitWidth {
		landscape := "landscape"
		opts.Orientation = &landscape
	}
	if total <= fitWidth {
		one, zero, fit := 1, 0, true
		opts.FitToWidth, opts.FitToHeight = &one, &zero
		if err := f.SetSheetProps(name, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
			return fmt.Errorf("setting fit to page: %w", err)
		}
	}
	if err := f.SetPageLayout(name, opts); err != nil {
		return fmt.Errorf("setting page layout: %w", err)
	}
	return nil
}

// cellName returns the A1-style name of a zero-based column and row.
func cellName(col, row int) string {
	name, err := excelize.CoordinatesToCellName(col+1, row+1)
	if err != nil {
		return fmt.Sprintf("R%dC%d", row+1, col+1)
	}
	return name
}
