package xlsx

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestSheetNames(t *testing.T) {
	long := strings.Repeat("Quarterly revenue ", 3) // 54 characters
	tests := []struct {
		name  string
		asked []string
		want  []string
	}{
		{name: "kept as asked", asked: []string{"Sales", "Costs"}, want: []string{"Sales", "Costs"}},
		{name: "brackets and separators", asked: []string{"FX [EUR/USD]", `a:b\c*d?e`}, want: []string{"FX (EUR-USD)", "a-b-c-d-e"}},
		{name: "apostrophes", asked: []string{"'Quoted'", "O'Brien"}, want: []string{"Quoted", "O’Brien"}},
		{name: "empty and blank", asked: []string{"", "  ", "Data"}, want: []string{"Sheet1", "Sheet2", "Data"}},
		{name: "control characters", asked: []string{"Tab\tName\n"}, want: []string{"TabName"}},
		{name: "cut to 31", asked: []string{long}, want: []string{"Quarterly revenue Quarterly rev"}},
		{name: "cut leaves no trailing space", asked: []string{strings.Repeat("x", 30) + " y"}, want: []string{strings.Repeat("x", 30)}},
		{name: "duplicates ignoring case", asked: []string{"Data", "data", "DATA"}, want: []string{"Data", "data (2)", "DATA (3)"}},
		{name: "duplicate long names", asked: []string{long, long}, want: []string{"Quarterly revenue Quarterly rev", "Quarterly revenue Quarterly (2)"}},
		{name: "reserved history", asked: []string{"History"}, want: []string{"History (2)"}},
		{name: "generated name taken", asked: []string{"Sheet2", ""}, want: []string{"Sheet2", "Sheet2 (2)"}},
		{name: "emoji counted in utf-16", asked: []string{strings.Repeat("😀", 20)}, want: []string{strings.Repeat("😀", 15)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wb := Workbook{}
			for _, n := range tt.asked {
				wb.Sheets = append(wb.Sheets, Sheet{Name: n})
			}
			got := wb.SheetNames()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("SheetNames(%q) = %q, want %q", tt.asked, got, tt.want)
			}
			for _, n := range got {
				if len(utf16.Encode([]rune(n))) > 31 {
					t.Errorf("%q is longer than 31 UTF-16 units", n)
				}
			}
		})
	}
}
