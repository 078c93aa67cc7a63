package xlsx

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// FuzzParse checks that Parse refuses bad arguments only with a
// *render.SourceError, and that whatever it accepts renders to a
// workbook excelize can open, with every sheet and row in place.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"title":"T","sheets":[{"name":"S","rows":[["a","b"],[1,"x"]]}]}`))
	f.Add([]byte(`{"title":"","sheets":[{"name":"[a]:'b'","rows":[[null,true],["=SUM(A1:A2)","2026-03-01T14:30Z"]]}]}`))
	f.Add([]byte(`{"title":"T","sheets":[{"name":"x","rows":[["h"],["$1,234.50"],["€1.234,50"],["12.5%"],["'=A1"],["=\"a\"&'x'!A1"]]},{"name":"X","rows":[]}]}`))
	f.Add([]byte(`{"title":"T","sheets":[{"name":"x","rows":[["h"],[{"a":1}]]}]}`))
	f.Add([]byte(`{"title":"T","sheets":[{"name":"x","rows":[["h"],["=SUM(A1"]]}]}`))
	if src, err := os.ReadFile(filepath.Join("testdata", "sales.json")); err == nil {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wb, err := Parse(data)
		if err != nil {
			rendertest.SourceError(t, err)
			return
		}
		if len(data) > 1<<14 {
			return // keep each run fast; size bounds are tested elsewhere
		}
		out, err := Render(context.Background(), wb)
		if err != nil {
			t.Fatalf("Render of accepted arguments failed: %v", err)
		}
		x, err := excelize.OpenReader(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("rendered workbook does not open: %v", err)
		}
		defer x.Close()
		names := x.GetSheetList()
		if len(names) != len(wb.Sheets) {
			t.Fatalf("rendered %d sheets, want %d", len(names), len(wb.Sheets))
		}
		for i, name := range names {
			rows, err := x.GetRows(name, excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatalf("reading sheet %q: %v", name, err)
			}
			if len(rows) > len(wb.Sheets[i].Rows) {
				t.Fatalf("sheet %q has %d rows, more than the %d given", name, len(rows), len(wb.Sheets[i].Rows))
			}
		}
	})
}
