package docx

import (
	"strings"
	"unicode"

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

// columnWidths shares avail twips among the columns by their content,
// the way browsers lay out automatic tables: each column gets at least
// its longest word (so that no word is split across lines while another
// column has room), and what is left goes to the columns whose text
// would wrap, in proportion to how much more they need; when every
// cell fits on one line the slack is shared by need. Only when the
// longest words alone are wider than the page do columns shrink below
// them, in proportion.
func columnWidths(texts [][]string, avail int) []int {
	ncol := len(texts[0])
	minW := make([]float64, ncol)  // longest word
	needW := make([]float64, ncol) // longest cell on one line
	for i, row := range texts {
		scale := 1.0
		if i == 0 {
			scale = boldScale
		}
		for j, s := range row {
			for _, w := range strings.Fields(s) {
				minW[j] = max(minW[j], runWidth(w)*scale)
			}
			needW[j] = max(needW[j], runWidth(s)*scale)
		}
	}
	sumMin, sumNeed := 0.0, 0.0
	for j := range minW {
		minW[j] = max(minW[j], minColumnText) + 2*cellMargin + wordSlack
		needW[j] = max(needW[j]+2*cellMargin, minW[j])
		sumMin += minW[j]
		sumNeed += needW[j]
	}
	room := float64(avail)
	widths := make([]float64, ncol)
	switch {
	case sumNeed <= room:
		for j := range widths {
			widths[j] = needW[j] * room / sumNeed
		}
	case sumMin <= room:
		slack, want := room-sumMin, sumNeed-sumMin
		for j := range widths {
			widths[j] = minW[j] + slack*(needW[j]-minW[j])/want
		}
	default:
		for j := range widths {
			widths[j] = minW[j] * room / sumMin
		}
	}
	out := make([]int, ncol)
	used := 0
	for j, w := range widths {
		out[j] = int(w)
		used += out[j]
	}
	out[ncol-1] += avail - used
	return out
}

// Table text metrics, in twips: table text is 10 pt Calibri.
const (
	tableFontSize = 200 // 10 pt
	// boldScale is how much wider the header row's bold text sets.
	boldScale = 1.12
	// wordSlack is room beyond the estimate, which is coarse, so that a
	// longest word set a little wider than estimated still fits.
	wordSlack = 80
	// minColumnText keeps a column of one-letter cells from collapsing.
	minColumnText = 300
)

// runWidth estimates the width of s set in the table font, from advance
// widths grouped coarsely (em fractions). They are those of Arial and
// Noto Sans rather than of the narrower Calibri, since a reader without
// Calibri substitutes a wider face and a word must not split there
// either. East Asian wide characters are a full em.
func runWidth(s string) float64 {
	em := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("iljtfrI.,:;'|!()[]", r):
			em += 0.3
		case r == ' ':
			em += 0.26
		case strings.ContainsRune("mwMW%@", r):
			em += 0.9
		case r >= 'A' && r <= 'Z':
			em += 0.68
		case r >= 0x1100 && (r <= 0x115F || r >= 0x2E80 && r <= 0xA4CF || r >= 0xAC00 && r <= 0xD7A3 ||
			r >= 0xF900 && r <= 0xFAFF || r >= 0xFF00 && r <= 0xFF60 || r >= 0x1F300 && r <= 0x1FAFF || r >= 0x20000):
			em += 1
		default:
			em += 0.57
		}
	}
	return em * tableFontSize
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
