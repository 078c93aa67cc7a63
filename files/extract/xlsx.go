package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// The xlsx reader parses SpreadsheetML itself rather than through
// excelize: excelize inflates every part of the package up front (into
// memory, or temporary files past a size), whatever is then read, so the
// only way to bound it is to refuse large workbooks outright. Here the
// workbook, its relationships and styles are read whole under
// maxMetaPartBytes, and the worksheets and the shared strings are token
// streams read only as far as the output needs.
const (
	maxSheets   = 1000
	maxColumns  = 1024   // cells further right are left out
	maxCellRune = 32_767 // Excel's own limit on a cell's text
)

func xlsxText(ctx context.Context, r io.ReaderAt, size int64, out *output) error {
	pkg, err := openPackage("xlsx", r, size)
	if err != nil {
		return err
	}
	wb, err := readWorkbook(pkg)
	if err != nil {
		return err
	}
	sst := newSharedStrings(pkg, wb.sharedStrings)
	defer sst.close()
	for i, sh := range wb.sheets {
		if i == maxSheets {
			out.markTruncated()
			break
		}
		if i > 0 {
			if err := out.WriteString("\n\n"); err != nil {
				return err
			}
		}
		title := "## " + sh.name
		if sh.hidden {
			title += " (hidden)"
		}
		if err := out.WriteString(title + "\n"); err != nil {
			return err
		}
		sw := sheetWriter{out: out, sst: sst, styles: wb.styles}
		stop, err := sw.run(ctx, pkg, sh.part)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// workbook is what the workbook part and its relationships say.
type workbook struct {
	sheets        []sheet
	sharedStrings string // part name, or ""
	styles        numberStyles
}

type sheet struct {
	name   string
	part   string
	hidden bool
}

func readWorkbook(pkg *ooxmlPackage) (workbook, error) {
	main, err := pkg.mainPart(xlsxMainType)
	if err != nil {
		return workbook{}, err
	}
	var doc struct {
		Pr struct {
			Date1904 string `xml:"date1904,attr"`
		} `xml:"workbookPr"`
		Sheets []struct {
			Name  string     `xml:"name,attr"`
			State string     `xml:"state,attr"`
			Attrs []xml.Attr `xml:",any,attr"`
		} `xml:"sheets>sheet"`
	}
	if err := pkg.readMeta(main, &doc); err != nil {
		return workbook{}, err
	}
	rels, err := pkg.relationships(main)
	if err != nil {
		return workbook{}, err
	}
	var wb workbook
	for _, s := range doc.Sheets {
		var id string
		for _, a := range s.Attrs {
			if a.Name.Local == "id" {
				id = a.Value
			}
		}
		rel, ok := rels[id]
		// Chart sheets and dialog sheets hold no cells.
		if !ok || !relType(rel.Type, "worksheet") || pkg.part(rel.Target) == nil {
			continue
		}
		wb.sheets = append(wb.sheets, sheet{name: s.Name, part: rel.Target, hidden: s.State == "hidden" || s.State == "veryHidden"})
	}
	for _, rel := range rels {
		switch {
		case relType(rel.Type, "sharedStrings") && pkg.part(rel.Target) != nil:
			wb.sharedStrings = rel.Target
		case relType(rel.Type, "styles") && pkg.part(rel.Target) != nil:
			wb.styles = readNumberStyles(pkg, rel.Target)
		}
	}
	wb.styles.date1904 = doc.Pr.Date1904 == "1" || doc.Pr.Date1904 == "true"
	return wb, nil
}

// sheetWriter writes one worksheet's rows as CSV lines.
type sheetWriter struct {
	out    *output
	sst    *sharedStrings
	styles numberStyles

	row   []string // cells of the current row by column
	next  int      // column of a cell that gives no reference
	rows  int      // rows written
	cell  cell
	inV   bool // inside <v>
	inIS  int  // depth inside <is> (inline string)
	inT   bool // inside <t> of an inline string
	inRPh int  // depth inside <rPh> (phonetic run, not cell text)
	value strings.Builder
}

// cell is the cell being read.
type cell struct {
	col   int
	typ   string
	style int
}

// run writes the worksheet part. stop reports that nothing more is to
// be read from the package: the output is full or a read limit reached.
func (w *sheetWriter) run(ctx context.Context, pkg *ooxmlPackage, part string) (stop bool, err error) {
	rc, err := pkg.open(part, maxPartBytes)
	if err != nil {
		return true, err
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	for i := 0; ; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return true, err
			}
		}
		tok, err := d.RawToken()
		switch {
		case err == io.EOF:
			if w.rows == 0 {
				return false, w.out.WriteString("(empty)\n")
			}
			return false, nil
		case errors.Is(err, errPartCapped):
			w.out.markTruncated()
			return true, nil
		case err != nil:
			return true, malformed("xlsx", err)
		}
		if err := w.token(tok); err != nil {
			return true, err
		}
	}
}

func (w *sheetWriter) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		switch t.Name.Local {
		case "row":
			w.row, w.next = w.row[:0], 0
		case "c":
			w.startCell(t.Attr)
		case "v":
			w.inV = true
		case "is":
			w.inIS++
		case "rPh":
			w.inRPh++
		case "t":
			w.inT = w.inIS > 0
		}
	case xml.EndElement:
		switch t.Name.Local {
		case "row":
			return w.writeRow()
		case "c":
			return w.endCell()
		case "v":
			w.inV = false
		case "is":
			w.inIS = max(w.inIS-1, 0)
		case "rPh":
			w.inRPh = max(w.inRPh-1, 0)
		case "t":
			w.inT = false
		}
	case xml.CharData:
		if (w.inV || w.inT && w.inRPh == 0) && w.value.Len() < 4*maxCellRune {
			w.value.Write(t)
		}
	}
	return nil
}

func (w *sheetWriter) startCell(attrs []xml.Attr) {
	w.cell = cell{col: w.next}
	w.value.Reset()
	for _, a := range attrs {
		switch a.Name.Local {
		case "r":
			if col, ok := columnIndex(a.Value); ok {
				w.cell.col = col
			}
		case "t":
			w.cell.typ = a.Value
		case "s":
			w.cell.style, _ = strconv.Atoi(a.Value)
		}
	}
}

func (w *sheetWriter) endCell() error {
	w.next = w.cell.col + 1
	v, err := w.cellText()
	if err != nil {
		return err
	}
	if v == "" || w.cell.col >= maxColumns {
		return nil
	}
	for len(w.row) <= w.cell.col {
		w.row = append(w.row, "")
	}
	w.row[w.cell.col] = v
	return nil
}

// cellText is the text of the cell just read, as Excel shows it where
// that does not need the number format's full rules.
func (w *sheetWriter) cellText() (string, error) {
	v := w.value.String()
	switch w.cell.typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return "", nil
		}
		s, err := w.sst.get(i)
		return clip.Runes(s, maxCellRune), err
	case "b":
		if strings.TrimSpace(v) == "1" {
			return "TRUE", nil
		}
		return "FALSE", nil
	case "inlineStr", "str", "e", "d":
		return clip.Runes(v, maxCellRune), nil
	}
	v = strings.TrimSpace(v)
	if w.styles.isDate(w.cell.style) {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			if s, ok := excelDate(f, w.styles.date1904); ok {
				return s, nil
			}
		}
	}
	return clip.Runes(v, maxCellRune), nil
}

func (w *sheetWriter) writeRow() error {
	if len(w.row) == 0 {
		return nil
	}
	var b strings.Builder
	for i, v := range w.row {
		if i > 0 {
			b.WriteByte(',')
		}
		writeCSVField(&b, v)
		// The output cannot take more; stop building a line it will cut.
		if b.Len() > 4*w.out.remaining()+4 {
			break
		}
	}
	w.rows++
	if err := w.out.WriteString(b.String()); err != nil {
		return err
	}
	return w.out.WriteString("\n")
}

// writeCSVField writes v quoted as RFC 4180 requires when it holds a
// comma, a quote, a line break or leading or trailing space.
func writeCSVField(b *strings.Builder, v string) {
	if v == "" || !strings.ContainsAny(v, ",\"\r\n") && v[0] != ' ' && v[len(v)-1] != ' ' {
		b.WriteString(v)
		return
	}
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(v, `"`, `""`))
	b.WriteByte('"')
}

// columnIndex returns the zero-based column of a cell reference such as
// "AB12".
func columnIndex(ref string) (int, bool) {
	col := 0
	n := 0
	for n < len(ref) && n < 4 {
		c := ref[n] | 0x20 // lower case
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
		n++
	}
	if n == 0 {
		return 0, false
	}
	return col - 1, true
}
