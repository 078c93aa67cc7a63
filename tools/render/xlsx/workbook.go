package xlsx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/jsonscan"
	"github.com/switchyardhq/switchyard/tools/render"
)

// Bounds of a workbook. The per-cell and per-sheet ones are Excel's own;
// the others keep one tool call within the time and memory a request may
// spend.
const (
	// MaxSheets is the number of sheets a workbook may have.
	MaxSheets = 20
	// MaxRows is the number of rows a sheet may have, header included.
	MaxRows = 100_000
	// MaxColumns is the number of cells a row may have.
	MaxColumns = 200
	// MaxCells is the number of cells, empty ones included, a whole
	// workbook may have.
	MaxCells = 1_000_000
	// MaxCellChars is the length of a text cell in UTF-16 code units,
	// which is how Excel counts its 32,767 characters.
	MaxCellChars = 32_767
	// MaxFormulaChars is the length of a formula, without its "=", in
	// UTF-16 code units: Excel's limit of 8,192 characters.
	MaxFormulaChars = 8_192
	// MaxTitleChars is the length of the workbook title in characters.
	MaxTitleChars = 255
	// MaxSheetNameChars is the length of a sheet name as asked for in
	// characters. Longer names are refused rather than cut, since a name
	// that long is not a name; names up to this length are shortened to
	// Excel's 31 characters.
	MaxSheetNameChars = 255
)

// Workbook is what the create_spreadsheet tool is asked for: a title and
// one or more sheets. It is the JSON object of the tool's arguments.
type Workbook struct {
	// Title is the workbook's title, written to its document properties.
	// Empty writes no title.
	Title string `json:"title"`

	// Sheets are the workbook's sheets, in tab order. Render needs at
	// least one.
	Sheets []Sheet `json:"sheets"`

	// Time is the creation and modification time written to the document
	// properties. It is not part of the tool's arguments: the caller sets
	// it, typically to the request's time. The zero value writes
	// 1980-01-01T00:00:00Z, so that equal workbooks render to equal bytes.
	Time time.Time `json:"-"`
}

// Sheet is one worksheet: a name and rows of cells.
type Sheet struct {
	// Name is the sheet's name as asked for. Render makes it acceptable to
	// Excel (see SheetNames); an empty name becomes "Sheet<N>".
	Name string `json:"name"`

	// Rows are the sheet's rows, top to bottom; the first is the header
	// row. Each cell is a JSON string, number, boolean or null (nil is
	// read as null); the package documentation says how each is written.
	// Rows may differ in length.
	Rows [][]json.RawMessage `json:"rows"`
}

// Parse reads the create_spreadsheet arguments: a JSON object with
// "title" and "sheets", each sheet with "name" and "rows". It is strict:
// unknown fields, missing fields, cells that are objects or arrays and
// anything beyond the bounds above are a *render.SourceError whose
// message says what to change.
func Parse(data []byte) (Workbook, error) {
	var raw struct {
		Title  *string `json:"title"`
		Sheets *[]struct {
			Name *string `json:"name"`
			// Rows are split below, without reflection: a sheet of
			// 10,000 rows has 100,000 cells.
			Rows json.RawMessage `json:"rows"`
		} `json:"sheets"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Workbook{}, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Workbook{}, render.Errorf("the arguments must be a single JSON object, with nothing after it")
	}
	if raw.Title == nil {
		return Workbook{}, render.Errorf(`"title" is missing: give the workbook a title`)
	}
	if raw.Sheets == nil {
		return Workbook{}, render.Errorf(`"sheets" is missing: give at least one sheet with "name" and "rows"`)
	}
	wb := Workbook{Title: *raw.Title, Sheets: make([]Sheet, 0, len(*raw.Sheets))}
	for i, s := range *raw.Sheets {
		if s.Name == nil {
			return Workbook{}, render.Errorf(`sheet %d has no "name"`, i+1)
		}
		if s.Rows == nil || string(s.Rows) == "null" {
			return Workbook{}, render.Errorf(`sheet %d (%q) has no "rows": give its rows as arrays of cells, the header row first`, i+1, *s.Name)
		}
		rows, ok := splitRows(s.Rows)
		if !ok {
			return Workbook{}, render.Errorf(`"rows" must be an array of rows, each an array of cells: [["Header", ...], [1, ...]]`)
		}
		wb.Sheets = append(wb.Sheets, Sheet{Name: *s.Name, Rows: rows})
	}
	return wb, wb.Validate()
}

// splitRows reads rows, valid JSON the decoder has checked, as arrays of
// raw cells that share its bytes. A null row is an empty one, as
// encoding/json would decode it.
func splitRows(rows []byte) ([][]json.RawMessage, bool) {
	var out [][]json.RawMessage
	ok := jsonscan.Elements(rows, func(row []byte) bool {
		if string(row) == "null" {
			out = append(out, nil)
			return true
		}
		cells := make([]json.RawMessage, 0, 8)
		ok := jsonscan.Elements(row, func(cell []byte) bool {
			cells = append(cells, cell)
			return true
		})
		out = append(out, cells)
		return ok
	})
	return out, ok
}

// decodeError turns what encoding/json reports into a message for the
// writer of the arguments, without Go type names.
func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return render.Errorf("the arguments are not valid JSON (at byte %d): %v", syntax.Offset, err)
	case errors.As(err, &typ):
		switch typ.Field {
		case "":
			return render.Errorf("the arguments must be a JSON object with \"title\" and \"sheets\"")
		case "sheets.rows":
			return render.Errorf(`"rows" must be an array of rows, each an array of cells: [["Header", ...], [1, ...]]`)
		}
		return render.Errorf("%q has the wrong type: expected %s", typ.Field, jsonKind(typ.Type.Kind().String()))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return render.Errorf("the arguments are empty or cut short: send one JSON object with \"title\" and \"sheets\"")
	}
	// DisallowUnknownFields reports `json: unknown field "x"`.
	return render.Errorf("the arguments do not match the schema: %s", trimJSONPrefix(err.Error()))
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "ptr":
		return "an object"
	}
	return "another type"
}

func trimJSONPrefix(s string) string {
	const p = "json: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// Validate checks wb against the bounds above and the cell types the
// tool accepts, and checks that formulas are well formed enough for Excel
// to open the file. It returns a *render.SourceError naming the sheet and
// cell at fault. Parse calls it; call it on a Workbook built otherwise
// (for instance from sheets replaced by an update) before rendering.
func (wb Workbook) Validate() error {
	if n := utf8.RuneCountInString(wb.Title); n > MaxTitleChars {
		return render.Errorf("the title has %d characters; at most %d are allowed", n, MaxTitleChars)
	}
	if len(wb.Sheets) == 0 {
		return render.Errorf(`"sheets" is empty: give at least one sheet with "name" and "rows"`)
	}
	if len(wb.Sheets) > MaxSheets {
		return render.Errorf("the workbook has %d sheets; at most %d are allowed: merge tables or make several workbooks", len(wb.Sheets), MaxSheets)
	}
	cells := 0
	for i, s := range wb.Sheets {
		if n := utf8.RuneCountInString(s.Name); n > MaxSheetNameChars {
			return render.Errorf("sheet %d's name has %d characters; sheet names are at most 31 characters", i+1, n)
		}
		if len(s.Rows) > MaxRows {
			return render.Errorf("sheet %q has %d rows; at most %d are allowed", s.Name, len(s.Rows), MaxRows)
		}
		for r, row := range s.Rows {
			if len(row) > MaxColumns {
				return render.Errorf("row %d of sheet %q has %d cells; at most %d columns are allowed", r+1, s.Name, len(row), MaxColumns)
			}
			cells += len(row)
			if cells > MaxCells {
				return render.Errorf("the workbook has more than %d cells; split the data or summarise it", MaxCells)
			}
			for c, raw := range row {
				if err := validateCell(raw, r == 0); err != nil {
					return render.Errorf("sheet %q, cell %s: %s", s.Name, cellName(c, r), err.Error())
				}
			}
		}
	}
	return nil
}

// validateCell checks one cell's JSON; header cells are written as text,
// so their strings are not read as formulas.
func validateCell(raw json.RawMessage, header bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case 'n':
		if string(raw) == "null" {
			return nil
		}
	case 't', 'f':
		if string(raw) == "true" || string(raw) == "false" {
			return nil
		}
	case '"':
		s, ok := decodeString(raw)
		if !ok {
			return errors.New("the string is not valid JSON")
		}
		if n := utf16Len(s); n > MaxCellChars {
			return errors.New("the text has " + strconv.Itoa(n) + " characters; a cell holds at most 32767")
		}
		if header {
			return nil
		}
		if body, ok := formulaBody(s); ok {
			if n := utf16Len(body); n > MaxFormulaChars {
				return errors.New("the formula has " + strconv.Itoa(n) + " characters; Excel allows at most 8192")
			}
			return checkFormula(body)
		}
		return nil
	case '{':
		return errors.New("a cell must be a string, number, boolean or null, not an object")
	case '[':
		return errors.New("a cell must be a string, number, boolean or null, not an array; rows are arrays of cells")
	default:
		if !json.Valid(raw) {
			return errors.New("the cell is not valid JSON")
		}
		if _, err := parseJSONNumber(raw); err != nil {
			return err
		}
		return nil
	}
	return errors.New("a cell must be a string, number, boolean or null")
}

// parseJSONNumber reads a JSON number cell. Numbers beyond float64 (and
// so beyond Excel) are refused rather than written as infinity.
func parseJSONNumber(raw json.RawMessage) (float64, error) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errors.New("the number " + string(raw) + " is out of Excel's range")
		}
		return 0, errors.New("a cell must be a string, number, boolean or null")
	}
	if f == 0 {
		f = 0 // no negative zero
	}
	return f, nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
