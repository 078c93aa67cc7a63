package extract

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/switchyardhq/switchyard/internal/officetest"
)

// excelizeXLSX builds a workbook with excelize, as another program would.
func excelizeXLSX(t testing.TB, build func(f *excelize.File)) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	build(f)
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestXLSXFromExcelize(t *testing.T) {
	data := excelizeXLSX(t, func(f *excelize.File) {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(f.SetSheetName("Sheet1", "Sales"))
		must(f.SetSheetRow("Sales", "A1", &[]any{"Region", "Units", "Price", "Shipped", "On time"}))
		must(f.SetSheetRow("Sales", "A2", &[]any{"North", 12, 3.5, time.Date(2024, 3, 15, 0, 0, 0, 0, time.UTC), true}))
		must(f.SetSheetRow("Sales", "A3", &[]any{`South, "far"`, 7, 0.25, time.Date(2024, 3, 16, 14, 30, 0, 0, time.UTC), false}))
		// Row 4 is empty; row 5 has a gap at B.
		must(f.SetCellValue("Sales", "A5", "Total"))
		must(f.SetCellFormula("Sales", "C5", "SUM(C2:C3)"))
		must(f.SetCellValue("Sales", "C5", 3.75))
		_, err := f.NewSheet("Notes")
		must(err)
		must(f.SetCellValue("Notes", "B2", "North again"))
		_, err = f.NewSheet("Empty")
		must(err)
		must(f.SetSheetVisible("Empty", false))
	})
	got, truncated := mustExtract(t, mimeXLSX, data, 10_000)
	want := `## Sales
Region,Units,Price,Shipped,On time
North,12,3.5,2024-03-15,TRUE
"South, ""far""",7,0.25,2024-03-16 14:30:00,FALSE
Total,,3.75

## Notes
,North again

## Empty (hidden)
(empty)`
	if got != want || truncated {
		t.Errorf("got\n%s\ntruncated %v; want\n%s", got, truncated, want)
	}
}

// handXLSX builds a workbook from hand-written parts: the features
// excelize does not write (inline strings, phonetic runs, custom date
// formats, chart sheets, the 1904 date system).
func handXLSX(t testing.TB, sheet, sharedStrings, styles string, date1904 bool) []byte {
	t.Helper()
	pr := ""
	if date1904 {
		pr = `<workbookPr date1904="1"/>`
	}
	parts := [][2]string{
		{"[Content_Types].xml", `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Override PartName="/xl/workbook.xml" ContentType="` + xlsxMainType + `"/></Types>`},
		{"xl/workbook.xml", `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
			`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` + pr +
			`<sheets><sheet name="Data" sheetId="1" r:id="rId1"/><sheet name="Chart" sheetId="2" r:id="rId2"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chartsheet" Target="chartsheets/sheet1.xml"/>` +
			`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="/xl/sharedStrings.xml"/>` +
			`<Relationship Id="rId4" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>` +
			`</Relationships>`},
		{"xl/worksheets/sheet1.xml", `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + sheet + `</sheetData></worksheet>`},
		{"xl/chartsheets/sheet1.xml", `<chartsheet/>`},
	}
	if sharedStrings != "" {
		parts = append(parts, [2]string{"xl/sharedStrings.xml", `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + sharedStrings + `</sst>`})
	}
	if styles != "" {
		parts = append(parts, [2]string{"xl/styles.xml", `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + styles + `</styleSheet>`})
	}
	return officetest.Zip(t, parts...)
}

func TestXLSXCells(t *testing.T) {
	const styles = `<numFmts count="3"><numFmt numFmtId="164" formatCode="dd&quot;.&quot;mm&quot;.&quot;yyyy"/>` +
		`<numFmt numFmtId="165" formatCode="[Red]0.00&quot; days&quot;"/><numFmt numFmtId="166" formatCode="[h]:mm"/></numFmts>` +
		`<cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="14"/><xf numFmtId="166"/></cellXfs>`
	tests := []struct {
		name     string
		sheet    string
		sst      string
		date1904 bool
		want     string
	}{
		{
			name:  "shared strings with rich text and phonetic runs",
			sheet: `<row r="1"><c r="A1" t="s"><v>1</v></c><c r="B1" t="s"><v>0</v></c></row>`,
			sst:   `<si><t>plain</t></si><si><r><t>ri</t></r><r><rPr><b/></rPr><t>ch</t></r><rPh><t>ふりがな</t></rPh></si>`,
			want:  "rich,plain",
		},
		{
			name:  "inline and formula strings, errors",
			sheet: `<row><c t="inlineStr"><is><t>inline</t></is></c><c t="str"><f>A1</f><v>calc</v></c><c t="e"><v>#DIV/0!</v></c></row>`,
			want:  "inline,calc,#DIV/0!",
		},
		{
			name:  "custom and built-in date formats, other formats left alone",
			sheet: `<row><c s="1"><v>45366</v></c><c s="2"><v>1.5</v></c><c s="3"><v>45366.75</v></c><c s="4"><v>0.5</v></c><c s="9"><v>7</v></c></row>`,
			want:  "2024-03-15,1.5,2024-03-15 18:00:00,12:00:00,7",
		},
		{
			name:     "1904 date system",
			sheet:    `<row><c s="1"><v>0</v></c></row>`,
			date1904: true,
			want:     "1904-01-01",
		},
		{
			name:  "serials before the fictitious 29 February 1900",
			sheet: `<row><c s="1"><v>1</v></c><c s="1"><v>59</v></c><c s="1"><v>61</v></c></row>`,
			want:  "1900-01-01,1900-02-28,1900-03-01",
		},
		{
			name:  "cells placed by reference, far columns left out",
			sheet: `<row r="3"><c r="C3"><v>3</v></c><c r="A3"><v>1</v></c><c r="ZZZ3"><v>far</v></c></row><row r="9"><c r="B9"><v>x</v></c></row>`,
			want:  "1,,3\n,x",
		},
		{
			name:  "a string index beyond the table shows empty",
			sheet: `<row><c t="s"><v>99</v></c><c><v>2</v></c></row>`,
			sst:   `<si><t>only</t></si>`,
			want:  ",2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := mustExtract(t, mimeXLSX, handXLSX(t, tt.sheet, tt.sst, styles, tt.date1904), 1000)
			want := "## Data\n" + tt.want
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestXLSXTruncation(t *testing.T) {
	var rows strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&rows, `<row r="%d"><c t="s"><v>%d</v></c><c><v>%d</v></c></row>`, i+1, i, i)
	}
	var sst strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sst, "<si><t>name %d</t></si>", i)
	}
	got, truncated := mustExtract(t, mimeXLSX, handXLSX(t, rows.String(), sst.String(), "", false), 200)
	if !truncated || len([]rune(got)) > 200 || !strings.HasPrefix(got, "## Data\nname 0,0\nname 1,1\n") {
		t.Errorf("got %q, truncated %v", got, truncated)
	}
}

// TestXLSXSharedStringsReadLazily checks that reading the first rows of
// a sheet reads only the start of a large string table.
func TestXLSXSharedStringsReadLazily(t *testing.T) {
	var sst strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&sst, "<si><t>string number %d</t></si>", i)
	}
	data := handXLSX(t, `<row><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row>`, sst.String(), "", false)
	pkg, err := openPackage("xlsx", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	s := newSharedStrings(pkg, "xl/sharedstrings.xml")
	defer s.close()
	if v, err := s.get(1); err != nil || v != "string number 1" {
		t.Fatalf("get(1) = %q, %v", v, err)
	}
	if len(s.strs) != 2 || pkg.inflated > 64<<10 {
		t.Errorf("read %d strings, inflated %d bytes; want 2 strings and little inflated", len(s.strs), pkg.inflated)
	}
}

func TestXLSXRefused(t *testing.T) {
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want error
	}{
		{
			name: "zip bomb sheet",
			data: func(t *testing.T) []byte {
				return handXLSX(t, `<row><c><v>1</v></c></row>`+strings.Repeat(" ", 8<<20), "", "", false)
			},
			want: ErrLimit,
		},
		{
			name: "no workbook relationships for a sheet",
			data: func(t *testing.T) []byte {
				return officetest.Zip(t,
					[2]string{"[Content_Types].xml", `<Types><Override PartName="/xl/workbook.xml" ContentType="` + xlsxMainType + `"/></Types>`},
					[2]string{"xl/workbook.xml", `<workbook><sheets><sheet name="S" r:id="rId1"/></sheets></workbook>`})
			},
			want: nil, // no sheet can be found: no text, no error
		},
		{
			name: "broken sheet XML",
			data: func(t *testing.T) []byte { return handXLSX(t, `<row><c r=A1>`, "", "", false) },
			want: ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, _, err := extract(t, mimeXLSX, tt.data(t), 1000)
			if !errors.Is(err, tt.want) || tt.want == nil && (err != nil || text != "") {
				t.Errorf("got %q, error %v; want error %v", text, err, tt.want)
			}
		})
	}
}

func TestExcelDate(t *testing.T) {
	tests := []struct {
		name     string
		serial   float64
		date1904 bool
		want     string
		ok       bool
	}{
		{name: "date", serial: 45366, want: "2024-03-15", ok: true},
		{name: "rounding to the next day", serial: 45366.9999999, want: "2024-03-16", ok: true},
		{name: "time", serial: 0.75, want: "18:00:00", ok: true},
		{name: "negative", serial: -1},
		{name: "past year 9999", serial: 3e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := excelDate(tt.serial, tt.date1904)
			if got != tt.want || ok != tt.ok {
				t.Errorf("excelDate(%v) = %q, %v; want %q, %v", tt.serial, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDateFormatCode(t *testing.T) {
	for code, want := range map[string]bool{
		"yyyy-mm-dd":          true,
		"[$-409]mmmm d, yyyy": true,
		"h:mm AM/PM":          true,
		"[h]:mm:ss":           true,
		"0.00":                false,
		`0.00" days"`:         false,
		"[Red]#,##0":          false,
		`\d0`:                 false,
		"General":             false,
		`_(* #,##0_)`:         false,
	} {
		if got := dateFormatCode(code); got != want {
			t.Errorf("dateFormatCode(%q) = %v, want %v", code, got, want)
		}
	}
}
