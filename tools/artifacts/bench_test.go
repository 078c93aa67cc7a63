package artifacts

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

// spreadsheetArgs are create_spreadsheet's arguments for a workbook of
// 10,000 order rows with three formulas each (amount, net of discount,
// share of the total) over three sheets: 30,000 formulas.
func spreadsheetArgs(b *testing.B) []byte {
	regions := []string{"North", "South", "East", "West"}
	type sheet struct {
		Name string  `json:"name"`
		Rows [][]any `json:"rows"`
	}
	var sheets []sheet
	for s, n := range []int{3_334, 3_333, 3_333} {
		sh := sheet{Name: "Orders " + strconv.Itoa(s+1), Rows: [][]any{{"Region", "Units", "Price", "Discount", "Amount", "Net", "Share"}}}
		for i := range n {
			r := strconv.Itoa(i + 2)
			sh.Rows = append(sh.Rows, []any{regions[i%4], 1 + i%97, "$" + strconv.Itoa(10+i%90) + ".99",
				strconv.Itoa(i%10) + "%", "=B" + r + "*C" + r, "=E" + r + "*(1-D" + r + ")", "=F" + r + "/F$" + strconv.Itoa(n+2)})
		}
		last := strconv.Itoa(n + 1)
		sh.Rows = append(sh.Rows, []any{"Total", "=SUM(B2:B" + last + ")", nil, nil, "=SUM(E2:E" + last + ")", "=SUM(F2:F" + last + ")", nil})
		sheets = append(sheets, sh)
	}
	args, err := json.Marshal(map[string]any{"title": "Orders", "sheets": sheets})
	if err != nil {
		b.Fatal(err)
	}
	return args
}

// BenchmarkCreateSpreadsheet10kRows is the whole tool step the gateway
// runs for create_spreadsheet: decoding the arguments, computing the
// 30,000 formulas, rendering, and storing the file (in memory here).
func BenchmarkCreateSpreadsheet10kRows(b *testing.B) {
	args := spreadsheetArgs(b)
	all, err := New(Config{Files: &fakeFiles{}})
	if err != nil {
		b.Fatal(err)
	}
	var tool tools.Tool
	for _, t := range all {
		if t.Name() == tools.NameCreateSpreadsheet {
			tool = t
		}
	}
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		env := &tools.Env{AccountID: "acct", IDs: &counter{}}
		if _, err := tool.Execute(context.Background(), tools.Call{Name: tools.NameCreateSpreadsheet, Arguments: args, Env: env}); err != nil {
			b.Fatal(err)
		}
	}
}
