package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// docxText writes the text of a Word document's main part: paragraphs
// as lines, table rows as tab-separated cells. The part is parsed as a
// token stream, so its size costs time, never memory, and parsing stops
// as soon as the output is full.
func docxText(ctx context.Context, r io.ReaderAt, size int64, out *output) error {
	pkg, err := openPackage("docx", r, size)
	if err != nil {
		return err
	}
	main, err := pkg.mainPart(docxMainType)
	if err != nil {
		return err
	}
	rc, err := pkg.open(main, maxPartBytes)
	if err != nil {
		return err
	}
	defer rc.Close()
	w := docxWriter{out: out}
	return w.run(ctx, xml.NewDecoder(rc))
}

// docxSkipped are elements whose content is not document text: deleted
// text of tracked changes, field instructions (their results are kept),
// the fallback copy of content that mc:Choice already holds, and
// properties (tab stop definitions look like tab characters).
var docxSkipped = map[string]bool{
	"delText": true, "instrText": true, "Fallback": true,
	"pPr": true, "rPr": true, "sectPr": true, "tblPr": true, "trPr": true, "tcPr": true,
	"tblGrid": true, "tabs": true,
}

// docxWriter turns the token stream of a WordprocessingML body into
// text. Elements are matched by local name, which covers both the
// transitional and the strict namespace.
type docxWriter struct {
	out    *output
	skip   int  // depth inside a skipped element
	inText bool // inside w:t (or another text element)
	table  int  // table nesting depth
	cell   strings.Builder
	row    []string
}

func (w *docxWriter) run(ctx context.Context, d *xml.Decoder) error {
	for i := 0; ; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := d.RawToken()
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, errPartCapped):
			w.out.markTruncated()
			return nil
		case err != nil:
			return malformed("docx", err)
		}
		if err := w.token(tok); err != nil {
			return err
		}
	}
}

func (w *docxWriter) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		if w.skip > 0 || docxSkipped[t.Name.Local] {
			w.skip++
			return nil
		}
		return w.start(t.Name.Local)
	case xml.EndElement:
		if w.skip > 0 {
			w.skip--
			return nil
		}
		return w.end(t.Name.Local)
	case xml.CharData:
		if w.inText && w.skip == 0 {
			return w.text(string(t))
		}
	}
	return nil
}

func (w *docxWriter) start(name string) error {
	switch name {
	case "t":
		w.inText = true
	case "tab", "ptab":
		return w.text("\t")
	case "br", "cr":
		return w.text("\n")
	case "noBreakHyphen":
		return w.text("-")
	case "tbl":
		w.table++
	case "tr":
		if w.table == 1 {
			w.row = w.row[:0]
		}
	case "tc":
		if w.table == 1 {
			w.cell.Reset()
		}
	}
	return nil
}

func (w *docxWriter) end(name string) error {
	switch name {
	case "t":
		w.inText = false
	case "p":
		return w.text("\n")
	case "tc":
		if w.table == 1 {
			w.row = append(w.row, strings.Join(strings.Fields(w.cell.String()), " "))
			return nil
		}
		return w.text(" ")
	case "tr":
		if w.table == 1 {
			if err := w.out.WriteString(strings.Join(w.row, "\t")); err != nil {
				return err
			}
			return w.out.WriteString("\n")
		}
		return w.text(" ")
	case "tbl":
		if w.table > 0 {
			w.table--
		}
		if w.table == 0 {
			return w.out.WriteString("\n")
		}
	}
	return nil
}

// text writes s to the output, or, inside a table, to the current cell,
// where line breaks and tabs become spaces when the row is written.
func (w *docxWriter) text(s string) error {
	if w.table == 0 {
		return w.out.WriteString(s)
	}
	// A cell longer than the whole remaining output cannot be shown
	// anyway; keep only that much of it.
	if room := 4*w.out.remaining() + 4; w.cell.Len() < room {
		if len(s) > room-w.cell.Len() {
			s = s[:room-w.cell.Len()]
			w.out.markTruncated()
		}
		w.cell.WriteString(s)
	}
	return nil
}
