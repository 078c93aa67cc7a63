package extract

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// Fixtures are built by the tests: PDFs by hand, byte for byte, Office
// files with internal/officetest (docx) and excelize (xlsx, in xlsx_test.go).

// pdfBuilder writes a PDF whose objects are numbered from 1 in the order
// added, with a classic cross-reference table or a cross-reference
// stream.
type pdfBuilder struct {
	header string
	objs   []string
}

func (b *pdfBuilder) add(body string) int {
	b.objs = append(b.objs, body)
	return len(b.objs)
}

// set replaces object n, for objects that refer to later ones.
func (b *pdfBuilder) set(n int, body string) { b.objs[n-1] = body }

func stream(dict, data string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

func flate(data string) string {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write([]byte(data))
	w.Close()
	return buf.String()
}

// bytes writes the file with a classic cross-reference table.
func (b *pdfBuilder) bytes(root int) []byte {
	var out bytes.Buffer
	out.WriteString(b.head())
	offsets := b.writeObjects(&out)
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(b.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(b.objs)+1, root, xref)
	return out.Bytes()
}

func (b *pdfBuilder) head() string {
	if b.header != "" {
		return b.header
	}
	return "%PDF-1.4\n"
}

func (b *pdfBuilder) writeObjects(out *bytes.Buffer) []int {
	offsets := make([]int, len(b.objs))
	for i, body := range b.objs {
		offsets[i] = out.Len()
		fmt.Fprintf(out, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	return offsets
}

// bytesObjStm writes the file with the objects in packed stored in an
// object stream (given extra dictionary entries) and a cross-reference
// stream (with extra entries too), for the structure checks.
func (b *pdfBuilder) bytesObjStm(root int, packed []int, stmDict, xrefDict string) []byte {
	var out bytes.Buffer
	out.WriteString(b.head())
	inStm := map[int]int{} // object -> index in the object stream
	var index, body strings.Builder
	for i, n := range packed {
		inStm[n] = i
		fmt.Fprintf(&index, "%d %d ", n, body.Len())
		body.WriteString(b.objs[n-1])
		body.WriteString("\n")
	}
	offsets := make([]int, len(b.objs)+2)
	for i, obj := range b.objs {
		if _, ok := inStm[i+1]; ok {
			continue
		}
		offsets[i+1] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	stm := len(b.objs) + 1
	offsets[stm] = out.Len()
	data := index.String() + body.String()
	fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", stm,
		stream(fmt.Sprintf("/Type /ObjStm /N %d /First %d %s", len(packed), index.Len(), stmDict), data))
	xrefObj := stm + 1
	var entries bytes.Buffer
	for n := 0; n <= xrefObj; n++ {
		switch i, ok := inStm[n]; {
		case n == 0:
			entries.Write([]byte{0, 0, 0, 0, 0, 0xFF, 0xFF})
		case ok:
			entries.Write([]byte{2, 0, 0, byte(stm >> 8), byte(stm), 0, byte(i)})
		case n == xrefObj:
			off := out.Len()
			entries.Write([]byte{1, byte(off >> 24), byte(off >> 16), byte(off >> 8), byte(off), 0, 0})
		default:
			off := offsets[n]
			entries.Write([]byte{1, byte(off >> 24), byte(off >> 16), byte(off >> 8), byte(off), 0, 0})
		}
	}
	xrefAt := out.Len()
	fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefObj,
		stream(fmt.Sprintf("/Type /XRef /Size %d /W [1 4 2] /Root %d 0 R %s", xrefObj+1, root, xrefDict), entries.String()),
		xrefAt)
	return out.Bytes()
}

// pdfLiteral escapes s as a literal string.
func pdfLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	return "(" + r.Replace(s) + ")"
}

// textPDF makes a PDF with one page per element of pages, each line of
// a page shown on its own line in Helvetica.
func textPDF(pages ...[]string) []byte {
	var b pdfBuilder
	b.add("") // catalog
	b.add("") // page tree
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, lines := range pages {
		var c strings.Builder
		c.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
		for i, l := range lines {
			if i > 0 {
				c.WriteString("T* ")
			}
			c.WriteString(pdfLiteral(l) + " Tj\n")
		}
		c.WriteString("ET")
		content := b.add(stream("", c.String()))
		page := b.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", content, font))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	b.set(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.set(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	return b.bytes(1)
}
