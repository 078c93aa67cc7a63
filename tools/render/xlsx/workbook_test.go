package xlsx

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

func TestParse(t *testing.T) {
	wb, err := Parse([]byte(`{"title":"T","sheets":[{"name":"S","rows":[["a","b"],[1.5,"x"],[]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if wb.Title != "T" || len(wb.Sheets) != 1 || wb.Sheets[0].Name != "S" || len(wb.Sheets[0].Rows) != 3 {
		t.Fatalf("Parse = %+v", wb)
	}
	if got := string(wb.Sheets[0].Rows[1][0]); got != "1.5" {
		t.Fatalf("number cell kept as %q, want the JSON text 1.5", got)
	}
}

func TestParseErrors(t *testing.T) {
	manySheets := make([]string, MaxSheets+1)
	for i := range manySheets {
		manySheets[i] = fmt.Sprintf(`{"name":"s%d","rows":[]}`, i)
	}
	wideRow := "[" + strings.Repeat("1,", MaxColumns) + "1]"
	tests := []struct {
		name string
		in   string
		want string // in the message
	}{
		{name: "not json", in: `{"title":`, want: "cut short"},
		{name: "syntax", in: `{"title":"x",}`, want: "not valid JSON"},
		{name: "not an object", in: `[1]`, want: "must be a JSON object"},
		{name: "trailing data", in: `{"title":"x","sheets":[{"name":"a","rows":[]}]} {}`, want: "nothing after it"},
		{name: "unknown field", in: `{"title":"x","sheets":[],"theme":"dark"}`, want: `unknown field "theme"`},
		{name: "missing title", in: `{"sheets":[{"name":"a","rows":[]}]}`, want: `"title" is missing`},
		{name: "missing sheets", in: `{"title":"x"}`, want: `"sheets" is missing`},
		{name: "no sheets", in: `{"title":"x","sheets":[]}`, want: `"sheets" is empty`},
		{name: "title type", in: `{"title":5,"sheets":[]}`, want: `"title" has the wrong type`},
		{name: "missing name", in: `{"title":"x","sheets":[{"rows":[]}]}`, want: `sheet 1 has no "name"`},
		{name: "missing rows", in: `{"title":"x","sheets":[{"name":"a"}]}`, want: `has no "rows"`},
		{name: "row not array", in: `{"title":"x","sheets":[{"name":"a","rows":[1]}]}`, want: `"rows" must be an array of rows`},
		{name: "object cell", in: `{"title":"x","sheets":[{"name":"a","rows":[["h"],[{"v":1}]]}]}`, want: `cell A2: a cell must be a string, number, boolean or null, not an object`},
		{name: "array cell", in: `{"title":"x","sheets":[{"name":"a","rows":[["h","i"],[1,[2]]]}]}`, want: `cell B2`},
		{name: "number out of range", in: `{"title":"x","sheets":[{"name":"a","rows":[["h"],[1e999]]}]}`, want: "out of Excel's range"},
		{name: "too many sheets", in: `{"title":"x","sheets":[` + strings.Join(manySheets, ",") + `]}`, want: "at most 20 are allowed"},
		{name: "too many columns", in: `{"title":"x","sheets":[{"name":"a","rows":[` + wideRow + `]}]}`, want: "at most 200 columns"},
		{name: "cell too long", in: `{"title":"x","sheets":[{"name":"a","rows":[["` + strings.Repeat("x", MaxCellChars+1) + `"]]}]}`, want: "a cell holds at most 32767"},
		{name: "unbalanced formula", in: `{"title":"x","sheets":[{"name":"a","rows":[["h"],["=SUM(A1:A3"]]}]}`, want: "an opening ( is not closed"},
		{name: "open string in formula", in: `{"title":"x","sheets":[{"name":"a","rows":[["h"],["=\"abc"]]}]}`, want: "double quotes is not closed"},
		{name: "formula too long", in: `{"title":"x","sheets":[{"name":"a","rows":[["h"],["=` + strings.Repeat("1+", 4100) + `1"]]}]}`, want: "at most 8192"},
		{name: "title too long", in: `{"title":"` + strings.Repeat("t", 256) + `","sheets":[{"name":"a","rows":[]}]}`, want: "title has 256 characters"},
		{name: "sheet name far too long", in: `{"title":"x","sheets":[{"name":"` + strings.Repeat("n", 256) + `","rows":[]}]}`, want: "at most 31 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			rendertest.SourceError(t, err, tt.want)
		})
	}
}

func TestValidateBounds(t *testing.T) {
	wb := Workbook{Title: "x", Sheets: []Sheet{{Name: "a", Rows: make([][]json.RawMessage, MaxRows+1)}}}
	err := wb.Validate()
	var se *render.SourceError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "at most 100000 are allowed") {
		t.Fatalf("Validate with %d rows = %v, want a row bound error", MaxRows+1, err)
	}
	cells := make([]json.RawMessage, MaxColumns)
	many := make([][]json.RawMessage, MaxCells/MaxColumns+1)
	for i := range many {
		many[i] = cells
	}
	wb = Workbook{Title: "x", Sheets: []Sheet{{Name: "a", Rows: many}}}
	if err := wb.Validate(); !errors.As(err, &se) || !strings.Contains(se.Message, "more than 1000000 cells") {
		t.Fatalf("Validate with too many cells = %v, want a cell bound error", err)
	}
}
