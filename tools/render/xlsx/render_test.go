package xlsx

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// cells turns Go values into a row of JSON cells.
func cells(t testing.TB, values ...any) []json.RawMessage {
	t.Helper()
	row := make([]json.RawMessage, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		row[i] = b
	}
	return row
}

func testWorkbook(t testing.TB) Workbook {
	return Workbook{
		Title: "Quarterly report",
		Time:  time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC),
		Sheets: []Sheet{
			{Name: "Orders/2026", Rows: [][]json.RawMessage{
				cells(t, "Date", "Region", "Units", "Price", "Total", "Share", "Paid", "Id", "Note"),
				cells(t, "2026-03-01", "North", 12, "$1,250.00", "=C2*D2", "12.5%", true, "007", "a long note "+strings.Repeat("word ", 20)),
				cells(t, "2026-03-02T14:30", "South", 3.5, "$10.00", "=C3*D3", "5%", false, "008", nil),
				cells(t, nil, "Total", "=SUM(C2:C3)", nil, "=SUM(E2:E3)"),
			}},
			{Name: "orders/2026", Rows: [][]json.RawMessage{
				cells(t, "Ratio"),
				cells(t, "='Orders-2026'!E2/'Orders-2026'!E4"),
			}},
		},
	}
}

// openRendered renders wb and opens the result with excelize.
func openRendered(t *testing.T, wb Workbook) (*excelize.File, []byte) {
	t.Helper()
	out, err := Render(context.Background(), wb)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	f, err := excelize.OpenReader(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("opening the rendered workbook: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f, out
}

func TestRenderCells(t *testing.T) {
	f, _ := openRendered(t, testWorkbook(t))
	const sheet = "Orders-2026"
	if got, want := f.GetSheetList(), []string{"Orders-2026", "orders-2026 (2)"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sheets = %q, want %q", got, want)
	}
	tests := []struct {
		name    string
		cell    string
		typ     excelize.CellType
		raw     string // value as stored (cached value for formulas)
		format  string // custom number format, "" for none
		formula string
	}{
		{name: "header is text", cell: "A1", typ: excelize.CellTypeInlineString, raw: "Date"},
		{name: "date", cell: "A2", typ: excelize.CellTypeUnset, raw: "46082", format: "yyyy-mm-dd"},
		{name: "datetime", cell: "A3", raw: "46083.604166666664", format: "yyyy-mm-dd hh:mm"},
		{name: "text", cell: "B2", typ: excelize.CellTypeInlineString, raw: "North"},
		{name: "number, with the column's decimals", cell: "C3", raw: "3.5", format: "0.0"},
		{name: "currency", cell: "D2", raw: "1250", format: `"$"#,##0.00`},
		{name: "formula cached and formatted by its references", cell: "E2", raw: "15000", format: `"$"#,##0.00`, formula: "C2*D2"},
		{name: "total takes the column format", cell: "E4", raw: "15035", format: `"$"#,##0.00`, formula: "SUM(E2:E3)"},
		{name: "sum of plain numbers", cell: "C4", raw: "15.5", format: "0.0", formula: "SUM(C2:C3)"},
		{name: "percent", cell: "F2", raw: "0.125", format: "0.0%"},
		{name: "boolean", cell: "G2", typ: excelize.CellTypeBool, raw: "1", format: formatBool},
		{name: "leading zeros stay text", cell: "H2", typ: excelize.CellTypeInlineString, raw: "007"},
		{name: "null is empty", cell: "I3", raw: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := f.GetCellValue(sheet, tt.cell, excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatal(err)
			}
			if raw != tt.raw {
				t.Errorf("%s value = %q, want %q", tt.cell, raw, tt.raw)
			}
			if tt.typ != excelize.CellTypeUnset || tt.formula == "" {
				typ, _ := f.GetCellType(sheet, tt.cell)
				if typ != tt.typ {
					t.Errorf("%s type = %v, want %v", tt.cell, typ, tt.typ)
				}
			}
			formula, _ := f.GetCellFormula(sheet, tt.cell)
			if formula != tt.formula {
				t.Errorf("%s formula = %q, want %q", tt.cell, formula, tt.formula)
			}
			id, _ := f.GetCellStyle(sheet, tt.cell)
			style, err := f.GetStyle(id)
			if err != nil {
				t.Fatal(err)
			}
			format := ""
			if style.CustomNumFmt != nil {
				format = *style.CustomNumFmt
			}
			if format != tt.format {
				t.Errorf("%s format = %q, want %q", tt.cell, format, tt.format)
			}
		})
	}

	// Cross-sheet division: cached.
	raw, _ := f.GetCellValue("orders-2026 (2)", "A2", excelize.Options{RawCellValue: true})
	if !strings.HasPrefix(raw, "0.9976") {
		t.Errorf("ratio cached as %q, want 15000/15035", raw)
	}
}

func TestRenderHeaderAndLayout(t *testing.T) {
	f, out := openRendered(t, testWorkbook(t))
	const sheet = "Orders-2026"

	panes, err := f.GetPanes(sheet)
	if err != nil {
		t.Fatal(err)
	}
	if !panes.Freeze || panes.YSplit != 1 || panes.XSplit != 0 || panes.TopLeftCell != "A2" {
		t.Errorf("panes = %+v, want the first row frozen", panes)
	}

	id, _ := f.GetCellStyle(sheet, "B1")
	style, _ := f.GetStyle(id)
	if style.Font == nil || !style.Font.Bold || len(style.Fill.Color) != 1 || style.Fill.Color[0] != headerFill {
		t.Errorf("header style = font %+v fill %+v, want bold on %s", style.Font, style.Fill, headerFill)
	}
	// The header of a numeric column sits right, over its numbers.
	for cell, want := range map[string]string{"B1": "left", "C1": "right", "E1": "right"} { // E: formulas only
		id, _ := f.GetCellStyle(sheet, cell)
		style, _ := f.GetStyle(id)
		if style.Alignment == nil || style.Alignment.Horizontal != want {
			t.Errorf("%s alignment = %+v, want %s", cell, style.Alignment, want)
		}
	}

	widths := map[string]float64{}
	for _, col := range []string{"A", "B", "H", "I"} {
		widths[col], _ = f.GetColWidth(sheet, col)
	}
	if widths["B"] < minColumnWidth || widths["B"] > 15 {
		t.Errorf("column B (short words) width %v, want a narrow column", widths["B"])
	}
	if widths["A"] <= widths["B"] {
		t.Errorf("column A (date-times) width %v, want wider than B (%v)", widths["A"], widths["B"])
	}
	if widths["I"] != maxColumnWidth {
		t.Errorf("column I (long note) width %v, want the cap %d", widths["I"], maxColumnWidth)
	}
	id, _ = f.GetCellStyle(sheet, "I2")
	style, _ = f.GetStyle(id)
	if style.Alignment == nil || !style.Alignment.WrapText {
		t.Errorf("long note alignment = %+v, want wrapped", style.Alignment)
	}

	if h, _ := f.GetRowHeight(sheet, 2); h != 2*lineHeight {
		t.Errorf("row 2 (a note of two lines) height %v, want %d", h, 2*lineHeight)
	}
	if h, _ := f.GetRowHeight(sheet, 3); h == 2*lineHeight {
		t.Errorf("row 3 (no wrapped text) height %v, want the default", h)
	}

	props, err := f.GetDocProps()
	if err != nil {
		t.Fatal(err)
	}
	if props.Title != "Quarterly report" || props.Created != "2026-03-31T12:00:00Z" || props.Modified != props.Created {
		t.Errorf("doc props = %+v, want the title and the workbook time", props)
	}
	calc, err := f.GetCalcProps()
	if err != nil {
		t.Fatal(err)
	}
	if calc.FullCalcOnLoad == nil || !*calc.FullCalcOnLoad {
		t.Errorf("calc props = %+v, want full calculation on load", calc)
	}

	sheetXML := zipPart(t, out, "xl/worksheets/sheet1.xml")
	// excelize writes the range with dollar signs, as Excel itself does
	// in some files.
	// The filter stops above the totals row, so sorting keeps it last.
	if !strings.Contains(sheetXML, `<autoFilter ref="$A$1:$I$3"`) && !strings.Contains(sheetXML, `<autoFilter ref="A1:I3"`) {
		i := strings.Index(sheetXML, "</sheetData>")
		t.Errorf("sheet1.xml has no autofilter over A1:I3:\n%s", sheetXML[max(i, 0):])
	}
	if !strings.Contains(sheetXML, `<dimension ref="A1:I4"`) {
		t.Errorf("sheet1.xml does not give its dimension as A1:I4:\n%.600s", sheetXML[strings.Index(sheetXML, "<dimension"):])
	}
	// The totals row is bold between a rule and a double rule, across
	// the table, empty cells included.
	for _, ref := range []string{"A4", "B4", "E4", "I4"} {
		id, _ := f.GetCellStyle(sheet, ref)
		style, _ := f.GetStyle(id)
		if style.Font == nil || !style.Font.Bold || len(style.Border) != 2 {
			t.Errorf("totals cell %s style = font %+v border %+v, want bold between rules", ref, style.Font, style.Border)
		}
	}
	if id, _ := f.GetCellStyle(sheet, "E3"); id == 0 {
		t.Error("E3 has no style")
	} else if style, _ := f.GetStyle(id); style.Font != nil && style.Font.Bold {
		t.Error("a body row above the totals is bold")
	}
	if strings.Contains(sheetXML, "filterMode") {
		t.Errorf("sheet1.xml says rows are filtered out")
	}
	workbookXML := strings.ReplaceAll(zipPart(t, out, "xl/workbook.xml"), "&#39;", "'")
	for _, want := range []string{`name="_xlnm._FilterDatabase">'Orders-2026'!$A$1:$I$3<`, `name="_xlnm.Print_Titles">'Orders-2026'!$1:$1<`} {
		if !strings.Contains(workbookXML, want) {
			t.Errorf("workbook.xml lacks %s:\n%s", want, workbookXML)
		}
	}
}

func TestRenderWithoutFormulasAsksNoRecalculation(t *testing.T) {
	wb := Workbook{Title: "x", Sheets: []Sheet{{Name: "a", Rows: [][]json.RawMessage{cells(t, "h"), cells(t, 1)}}}}
	_, out := openRendered(t, wb)
	if strings.Contains(zipPart(t, out, "xl/workbook.xml"), "fullCalcOnLoad") {
		t.Error("a workbook without formulas asks for recalculation on load")
	}
}

func TestRenderVolatileFormulasAreNotCached(t *testing.T) {
	wb := Workbook{Title: "x", Sheets: []Sheet{{Name: "a", Rows: [][]json.RawMessage{
		cells(t, "h", "i"), cells(t, "=1+1", "=TODAY()"),
	}}}}
	f, _ := openRendered(t, wb)
	for _, c := range []string{"A2", "B2"} {
		if v, _ := f.GetCellValue("a", c, excelize.Options{RawCellValue: true}); v != "" {
			t.Errorf("%s cached %q in a workbook calling TODAY()", c, v)
		}
		if formula, _ := f.GetCellFormula("a", c); formula == "" {
			t.Errorf("%s lost its formula", c)
		}
	}
}

func TestRenderEdgeShapes(t *testing.T) {
	tests := []struct {
		name string
		rows [][]json.RawMessage
	}{
		{name: "no rows"},
		{name: "header only", rows: [][]json.RawMessage{cells(t, "a", "b")}},
		{name: "empty header row", rows: [][]json.RawMessage{{}, cells(t, 1, 2)}},
		{name: "ragged rows", rows: [][]json.RawMessage{cells(t, "a"), cells(t, 1, 2, 3), {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := openRendered(t, Workbook{Title: "x", Sheets: []Sheet{{Name: "s", Rows: tt.rows}}})
			rows, err := f.GetRows("s")
			if err != nil {
				t.Fatal(err)
			}
			filled := 0
			for _, r := range tt.rows {
				for _, c := range r {
					if string(c) != "null" {
						filled++
					}
				}
			}
			got := 0
			for _, r := range rows {
				for _, c := range r {
					if c != "" {
						got++
					}
				}
			}
			if got != filled {
				t.Fatalf("read back %d filled cells (%q), want %d", got, rows, filled)
			}
		})
	}
}

func TestRenderRefusesInvalidWorkbook(t *testing.T) {
	_, err := Render(context.Background(), Workbook{Title: "x"})
	if err == nil || !strings.Contains(err.Error(), `"sheets" is empty`) {
		t.Fatalf("Render of a workbook without sheets = %v", err)
	}
}

func TestRenderHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, benchWorkbook(t, 10))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Render with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	wb := testWorkbook(t)
	// Several sheets, since excelize writes streamed sheets in map order.
	for i := range 6 {
		wb.Sheets = append(wb.Sheets, Sheet{Name: "extra", Rows: [][]json.RawMessage{cells(t, "h"), cells(t, i)}})
	}
	first, err := Render(context.Background(), wb)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := Render(context.Background(), wb)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatal("two renders of the same workbook differ")
		}
	}
}

func TestRenderIsValidOOXMLPackage(t *testing.T) {
	out, err := Render(context.Background(), testWorkbook(t))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	if zr.File[0].Name != "[Content_Types].xml" {
		t.Errorf("first part is %s, want [Content_Types].xml", zr.File[0].Name)
	}
	parts := map[string]bool{}
	for _, zf := range zr.File {
		parts[zf.Name] = true
		if !zf.Modified.Equal(zipTime) {
			t.Errorf("%s modified %v, want the fixed %v", zf.Name, zf.Modified, zipTime)
		}
	}
	for _, want := range []string{"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels",
		"xl/styles.xml", "xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml", "docProps/core.xml"} {
		if !parts[want] {
			t.Errorf("package lacks %s", want)
		}
	}
	types := zipPart(t, out, "[Content_Types].xml")
	for _, want := range []string{"/xl/workbook.xml", "/xl/worksheets/sheet2.xml"} {
		if !strings.Contains(types, want) {
			t.Errorf("[Content_Types].xml does not declare %s", want)
		}
	}
}

// zipPart returns one part of an xlsx package.
func zipPart(t *testing.T, pkg []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		if zf.Name != name {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Fatalf("package has no part %s", name)
	return ""
}

// benchWorkbook is a sheet of rows of eight typical columns.
func benchWorkbook(t testing.TB, rows int) Workbook {
	sheet := Sheet{Name: "Data", Rows: [][]json.RawMessage{
		cells(t, "Date", "Region", "Product", "Units", "Price", "Discount", "Paid", "Note"),
	}}
	regions := []string{"North", "South", "East", "West"}
	for i := range rows {
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365)
		sheet.Rows = append(sheet.Rows, cells(t,
			day.Format(time.DateOnly), regions[i%4], "Product "+string(rune('A'+i%26)), i%97,
			"$"+string(rune('1'+i%9))+"9.99", string(rune('0'+i%10))+"%", i%3 == 0, "Order note number "+string(rune('a'+i%26))))
	}
	return Workbook{Title: "Benchmark", Sheets: []Sheet{sheet}}
}

func BenchmarkRender10kRows(b *testing.B) {
	wb := benchWorkbook(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(context.Background(), wb); err != nil {
			b.Fatal(err)
		}
	}
}

// formulaWorkbook is the workbook of a large report: 10,000 order rows
// with three formulas each (amount, net of discount, share of the
// total) over three sheets, and a summary by region; 30,000 formulas and
// more in all.
func formulaWorkbook(t testing.TB) Workbook {
	wb := Workbook{Title: "Orders"}
	regions := []string{"North", "South", "East", "West"}
	perSheet := []int{3_334, 3_333, 3_333}
	for s, n := range perSheet {
		sheet := Sheet{Name: "Orders " + strconv.Itoa(s+1), Rows: [][]json.RawMessage{
			cells(t, "Region", "Units", "Price", "Discount", "Amount", "Net", "Share"),
		}}
		for i := range n {
			r := strconv.Itoa(i + 2)
			sheet.Rows = append(sheet.Rows, cells(t, regions[i%4], 1+i%97, "$"+strconv.Itoa(10+i%90)+".99",
				strconv.Itoa(i%10)+"%", "=B"+r+"*C"+r, "=E"+r+"*(1-D"+r+")", "=F"+r+"/F$"+strconv.Itoa(n+2)))
		}
		last := strconv.Itoa(n + 1)
		sheet.Rows = append(sheet.Rows, cells(t, "Total", "=SUM(B2:B"+last+")", nil, nil,
			"=SUM(E2:E"+last+")", "=SUM(F2:F"+last+")", nil))
		wb.Sheets = append(wb.Sheets, sheet)
	}
	summary := Sheet{Name: "Summary", Rows: [][]json.RawMessage{cells(t, "Region", "Net", "Share")}}
	for i, region := range regions {
		r := strconv.Itoa(i + 2)
		summary.Rows = append(summary.Rows, cells(t, region,
			"=SUMIF('Orders 1'!A2:A3335,A"+r+",'Orders 1'!F2:F3335)+SUMIF('Orders 2'!A2:A3334,A"+r+",'Orders 2'!F2:F3334)+SUMIF('Orders 3'!A2:A3334,A"+r+",'Orders 3'!F2:F3334)",
			"=B"+r+"/SUM(B$2:B$5)"))
	}
	wb.Sheets = append(wb.Sheets, summary)
	return wb
}

// BenchmarkRenderFormulas renders the 30,000-formula workbook, every
// value computed and cached.
func BenchmarkRenderFormulas(b *testing.B) {
	wb := formulaWorkbook(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(context.Background(), wb); err != nil {
			b.Fatal(err)
		}
	}
}
