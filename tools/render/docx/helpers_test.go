package docx

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/png"
	"io"
	"strings"
	"testing"
)

// unzip returns the parts of a package by name.
func unzip(t testing.TB, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	parts := make(map[string][]byte)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		parts[f.Name] = b
	}
	return parts
}

// para is a paragraph of document.xml as a reader sees it.
type para struct {
	style     string
	text      string
	numID     string
	ilvl      string
	jc        string
	inTable   bool
	links     []string // relationship ids of hyperlinks
	linkTexts []string
	embeds    []string // relationship ids of pictures
	extents   [][2]int64
	bold      bool // some run is bold
	bidi      bool // the paragraph reads right to left
	rtlRuns   int  // runs marked right to left
}

// tbl is a table of document.xml: its cell texts and header fills.
type tbl struct {
	rows       [][]string
	headerFill []string
	repeat     bool // the first row repeats on each page
}

type parsedDoc struct {
	paras  []para
	tables []tbl
}

const (
	wNS = nsW
	rNS = nsR
)

func attr(se xml.StartElement, space, local string) string {
	for _, a := range se.Attr {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// parseDocument reads document.xml with encoding/xml.
func parseDocument(t testing.TB, data []byte) parsedDoc {
	t.Helper()
	var doc parsedDoc
	dec := xml.NewDecoder(bytes.NewReader(data))
	var cur *para
	var text strings.Builder
	var linkText strings.Builder
	inLink, inText, inRPr := false, false, false
	tableDepth := 0
	var rowCells []string
	var cellText strings.Builder
	inCell, firstRow := false, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("document.xml: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Space == nsA && tok.Name.Local == "blip" && cur != nil {
				cur.embeds = append(cur.embeds, attr(tok, rNS, "embed"))
			}
			if tok.Name.Space == nsWP && tok.Name.Local == "extent" && cur != nil {
				var e [2]int64
				e[0] = atoi64(attr(tok, "", "cx"))
				e[1] = atoi64(attr(tok, "", "cy"))
				cur.extents = append(cur.extents, e)
			}
			if tok.Name.Space != wNS {
				continue
			}
			switch tok.Name.Local {
			case "tbl":
				tableDepth++
				doc.tables = append(doc.tables, tbl{})
				firstRow = true
			case "tr":
				rowCells = nil
			case "tblHeader":
				doc.tables[len(doc.tables)-1].repeat = true
			case "tc":
				inCell = true
				cellText.Reset()
			case "shd":
				if inCell && firstRow {
					tb := &doc.tables[len(doc.tables)-1]
					tb.headerFill = append(tb.headerFill, attr(tok, wNS, "fill"))
				}
			case "p":
				cur = &para{inTable: tableDepth > 0}
				text.Reset()
			case "pStyle":
				if cur != nil {
					cur.style = attr(tok, wNS, "val")
				}
			case "numId":
				if cur != nil {
					cur.numID = attr(tok, wNS, "val")
				}
			case "ilvl":
				if cur != nil {
					cur.ilvl = attr(tok, wNS, "val")
				}
			case "jc":
				if cur != nil {
					cur.jc = attr(tok, wNS, "val")
				}
			case "rPr":
				inRPr = true
			case "bidi":
				if cur != nil && !inRPr {
					cur.bidi = true
				}
			case "rtl":
				if inRPr && cur != nil {
					cur.rtlRuns++
				}
			case "b":
				if inRPr && cur != nil {
					cur.bold = true
				}
			case "hyperlink":
				inLink = true
				linkText.Reset()
				if cur != nil {
					cur.links = append(cur.links, attr(tok, rNS, "id"))
				}
			case "t":
				inText = true
			case "br":
				text.WriteString("\n")
			}
		case xml.EndElement:
			if tok.Name.Space != wNS {
				continue
			}
			switch tok.Name.Local {
			case "t":
				inText = false
			case "rPr":
				inRPr = false
			case "hyperlink":
				inLink = false
				if cur != nil {
					cur.linkTexts = append(cur.linkTexts, linkText.String())
				}
			case "p":
				if cur != nil {
					cur.text = text.String()
					doc.paras = append(doc.paras, *cur)
					if inCell {
						if cellText.Len() > 0 {
							cellText.WriteString("\n")
						}
						cellText.WriteString(cur.text)
					}
					cur = nil
				}
			case "tc":
				inCell = false
				rowCells = append(rowCells, cellText.String())
			case "tr":
				tb := &doc.tables[len(doc.tables)-1]
				tb.rows = append(tb.rows, rowCells)
				firstRow = false
			case "tbl":
				tableDepth--
			}
		case xml.CharData:
			if inText {
				text.Write(tok)
				if inLink {
					linkText.Write(tok)
				}
			}
		}
	}
	return doc
}

func atoi64(s string) int64 {
	var n int64
	for _, r := range s {
		if r < '0' || r > '9' {
			return -1
		}
		n = n*10 + int64(r-'0')
	}
	return n
}

// rel is one relationship of a .rels part.
type rel struct {
	ID         string `xml:"Id,attr"`
	Type       string `xml:"Type,attr"`
	Target     string `xml:"Target,attr"`
	TargetMode string `xml:"TargetMode,attr"`
}

func parseRels(t testing.TB, data []byte) map[string]rel {
	t.Helper()
	var v struct {
		Rels []rel `xml:"Relationship"`
	}
	if err := xml.Unmarshal(data, &v); err != nil {
		t.Fatalf("rels: %v", err)
	}
	m := make(map[string]rel)
	for _, r := range v.Rels {
		if _, dup := m[r.ID]; dup {
			t.Errorf("relationship id %s used twice", r.ID)
		}
		m[r.ID] = r
	}
	return m
}

// renderParts renders d and returns its parts, failing the test on error.
func renderParts(t testing.TB, d Document) (Result, map[string][]byte) {
	t.Helper()
	res, err := Render(context.Background(), d)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res, unzip(t, res.DOCX)
}

// smallPNG is a w×h PNG.
func smallPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
