package docx

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/tools/render/markdown"
	east "github.com/yuin/goldmark/extension/ast"
)

// table converts a GitHub table. The first row is the header; a column
// whose body cells are all numbers is right-aligned unless the Markdown
// aligns it.
func (c *converter) table(t *east.Table, sc scope) error {
	var rows [][]*east.TableCell
	ncol := 0
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []*east.TableCell
		for cl := r.FirstChild(); cl != nil; cl = cl.NextSibling() {
			if tc, ok := cl.(*east.TableCell); ok {
				row = append(row, tc)
			}
		}
		ncol = max(ncol, len(row))
		rows = append(rows, row)
	}
	if ncol == 0 {
		return nil
	}

	texts := make([][]string, len(rows))
	for i, row := range rows {
		texts[i] = make([]string, ncol)
		for j, tc := range row {
			texts[i][j] = strings.TrimSpace(markdown.PlainText(tc, c.src))
		}
	}
	avail := textWidth - max(sc.indent, 0)
	widths := columnWidths(texts, avail)
	aligns := make([]string, ncol)
	for j := range aligns {
		if j < len(t.Alignments) {
			switch t.Alignments[j] {
			case east.AlignLeft:
				aligns[j] = "left"
			case east.AlignCenter:
				aligns[j] = "center"
			case east.AlignRight:
				aligns[j] = "right"
			}
		}
		if aligns[j] == "" && numericColumn(texts, j) {
			aligns[j] = "right"
		}
	}

	out := &table{widths: widths, indent: max(sc.indent, 0)}
	for i, row := range rows {
		cells := make([]cell, ncol)
		for j := range cells {
			proto := newParagraph(styleTableText)
			proto.align = aligns[j]
			var base format
			if i == 0 {
				base.bold = true
				proto.keepNext = true
			}
			if j < len(row) {
				cellScope := scope{level: -1, width: int64(widths[j]-2*cellMargin) * emuPerTwip}
				ps, err := c.inlineParagraphs(row[j], proto, base, cellScope)
				if err != nil {
					return err
				}
				cells[j].paras = ps
			}
			if len(cells[j].paras) == 0 {
				// Every cell holds at least one paragraph.
				cells[j].paras = []*paragraph{proto}
			}
		}
		out.rows = append(out.rows, cells)
	}
	c.add(out)
	return nil
}

// columnWidths shares avail twips among the columns by how much text
// they hold, damped so that one long column does not squeeze the rest.
func columnWidths(texts [][]string, avail int) []int {
	ncol := len(texts[0])
	weights := make([]float64, ncol)
	total := 0.0
	for j := range weights {
		longest := 0
		for _, row := range texts {
			longest = max(longest, utf8.RuneCountInString(row[j]))
		}
		weights[j] = math.Sqrt(float64(min(max(longest, 3), 80)))
		total += weights[j]
	}
	widths := make([]int, ncol)
	used := 0
	for j, w := range weights {
		widths[j] = int(float64(avail) * w / total)
		used += widths[j]
	}
	widths[ncol-1] += avail - used
	return widths
}

// numericColumn reports whether the body cells of column j that are not
// empty are all numbers such as 1,234.5, -3%, $12 or 4.2x.
func numericColumn(texts [][]string, j int) bool {
	seen := false
	for _, row := range texts[1:] {
		s := row[j]
		if s == "" || s == "-" || s == "—" || s == "–" {
			continue
		}
		if !isNumber(s) {
			return false
		}
		seen = true
	}
	return seen
}

func isNumber(s string) bool {
	s = strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("+-−±$€£¥%x×~≈()", r)
	})
	if s == "" {
		return false
	}
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ',' || r == '.' || r == ' ' || r == '\u00a0' || r == '\'':
		case strings.ContainsRune("kKMBbn", r): // 1.2k, 3M, 4bn
		default:
			return false
		}
	}
	return digits > 0
}
