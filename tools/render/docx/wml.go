package docx

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"unicode"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// Namespaces of the parts written here.
const (
	xmlHeader = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
	nsW       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsR       = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	nsWP      = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
	nsA       = "http://schemas.openxmlformats.org/drawingml/2006/main"
	nsPic     = "http://schemas.openxmlformats.org/drawingml/2006/picture"
)

// escape writes s as XML character data or attribute value.
// encoding/xml's escaper also replaces characters XML 1.0 forbids, such
// as most control characters, with U+FFFD.
func escape(b *bytes.Buffer, s string) {
	_ = xml.EscapeText(b, []byte(s))
}

func itoa(n int) string { return strconv.Itoa(n) }

// documentXML writes word/document.xml.
func documentXML(blocks []block) []byte {
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<w:document xmlns:w="` + nsW + `" xmlns:r="` + nsR + `" xmlns:wp="` + nsWP + `" xmlns:a="` + nsA + `" xmlns:pic="` + nsPic + `"><w:body>`)
	for _, bl := range blocks {
		switch bl := bl.(type) {
		case *paragraph:
			writeParagraph(&b, bl)
		case *table:
			writeTable(&b, bl)
		}
	}
	b.WriteString(`<w:sectPr><w:footerReference w:type="default" r:id="` + footerID + `"/>`)
	b.WriteString(`<w:pgSz w:w="` + itoa(pageWidth) + `" w:h="` + itoa(pageHeight) + `"/>`)
	b.WriteString(`<w:pgMar w:top="` + itoa(margin) + `" w:right="` + itoa(margin) + `" w:bottom="` + itoa(margin) + `" w:left="` + itoa(margin) + `" w:header="709" w:footer="709" w:gutter="0"/>`)
	b.WriteString(`</w:sectPr></w:body></w:document>`)
	return b.Bytes()
}

func writeParagraph(b *bytes.Buffer, p *paragraph) {
	b.WriteString(`<w:p>`)
	writeParagraphProps(b, p, p.rightToLeft())
	var link string
	for _, r := range p.runs {
		if r.link != link {
			if link != "" {
				b.WriteString(`</w:hyperlink>`)
			}
			if r.link != "" {
				b.WriteString(`<w:hyperlink r:id="` + r.link + `" w:history="1">`)
			}
			link = r.link
		}
		writeRun(b, r)
	}
	if link != "" {
		b.WriteString(`</w:hyperlink>`)
	}
	b.WriteString(`</w:p>`)
}

// writeParagraphProps writes the paragraph's pPr, elements in the order
// the schema requires.
// A paragraph whose first strong letter is Hebrew or Arabic (rtl) reads
// from the right: bidi puts its start, list number included, at the
// right margin.
func writeParagraphProps(b *bytes.Buffer, p *paragraph, rtl bool) {
	b.WriteString(`<w:pPr><w:pStyle w:val="` + p.style + `"/>`)
	switch {
	case p.keepNext:
		b.WriteString(`<w:keepNext/>`)
	case p.breakAfter:
		b.WriteString(`<w:keepNext w:val="0"/>`)
	}
	if p.numID != 0 {
		b.WriteString(`<w:numPr><w:ilvl w:val="` + itoa(p.level) + `"/><w:numId w:val="` + itoa(p.numID) + `"/></w:numPr>`)
	}
	if p.bottomRule {
		b.WriteString(`<w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="` + ruleColour + `"/></w:pBdr>`)
	}
	if rtl {
		b.WriteString(`<w:bidi/>`)
	}
	if p.spaceBefore != unset || p.spaceAfter != unset {
		b.WriteString(`<w:spacing`)
		if p.spaceBefore != unset {
			b.WriteString(` w:before="` + itoa(p.spaceBefore) + `"`)
		}
		if p.spaceAfter != unset {
			b.WriteString(` w:after="` + itoa(p.spaceAfter) + `"`)
		}
		b.WriteString(`/>`)
	}
	if p.indent != unset {
		b.WriteString(`<w:ind w:left="` + itoa(p.indent) + `"/>`)
	}
	align := p.align
	if rtl {
		// In a bidi paragraph Word and LibreOffice read left and right
		// as start and end, and a paragraph without one starts at the
		// right margin.
		align = map[string]string{"left": "right", "right": "left"}[align]
	}
	if align != "" {
		b.WriteString(`<w:jc w:val="` + align + `"/>`)
	}
	b.WriteString(`</w:pPr>`)
}

// writeRun writes r, its emoji as runs of their own in the emoji font.
func writeRun(b *bytes.Buffer, r run) {
	if r.brk || r.pic != nil {
		writeRunPart(b, r, false)
		return
	}
	for _, seg := range splitEmoji(r.text) {
		part := r
		part.text = seg.text
		writeRunPart(b, part, seg.emoji)
	}
}

func writeRunPart(b *bytes.Buffer, r run, emoji bool) {
	b.WriteString(`<w:r>`)
	// Right-to-left text is marked so that Word orders it and sets it in
	// the complex-script font.
	rtl := !emoji && fonts.HasRTL(r.text)
	if r.bold || r.italic || r.strike || r.code || r.link != "" || rtl || emoji {
		b.WriteString(`<w:rPr>`)
		switch {
		case r.link != "":
			b.WriteString(`<w:rStyle w:val="` + styleHyperlink + `"/>`)
		case r.code:
			b.WriteString(`<w:rStyle w:val="` + styleCodeChar + `"/>`)
		}
		switch {
		case emoji:
			b.WriteString(emojiFontsRPr)
		case r.link != "" && r.code:
			// A code span inside a link: the link's colour, the code's font.
			b.WriteString(codeFonts)
		}
		if r.bold {
			b.WriteString(`<w:b/><w:bCs/>`)
		}
		if r.italic {
			b.WriteString(`<w:i/><w:iCs/>`)
		}
		if r.strike {
			b.WriteString(`<w:strike/>`)
		}
		if rtl {
			b.WriteString(`<w:rtl/>`)
		}
		b.WriteString(`</w:rPr>`)
	}
	switch {
	case r.brk:
		b.WriteString(`<w:br/>`)
	case r.pic != nil:
		writePicture(b, r.pic)
	default:
		b.WriteString(`<w:t xml:space="preserve">`)
		escape(b, r.text)
		b.WriteString(`</w:t>`)
	}
	b.WriteString(`</w:r>`)
}

// writePicture writes an inline DrawingML picture.
func writePicture(b *bytes.Buffer, p *picture) {
	cx, cy := strconv.FormatInt(p.cx, 10), strconv.FormatInt(p.cy, 10)
	id := itoa(p.id)
	b.WriteString(`<w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0">`)
	b.WriteString(`<wp:extent cx="` + cx + `" cy="` + cy + `"/><wp:effectExtent l="0" t="0" r="0" b="0"/>`)
	b.WriteString(`<wp:docPr id="` + id + `" name="`)
	escape(b, p.name)
	b.WriteString(`" descr="`)
	escape(b, p.descr)
	b.WriteString(`"/><wp:cNvGraphicFramePr><a:graphicFrameLocks noChangeAspect="1"/></wp:cNvGraphicFramePr>`)
	b.WriteString(`<a:graphic><a:graphicData uri="` + nsPic + `"><pic:pic>`)
	b.WriteString(`<pic:nvPicPr><pic:cNvPr id="` + id + `" name="`)
	escape(b, p.name)
	b.WriteString(`"/><pic:cNvPicPr><a:picLocks noChangeAspect="1" noChangeArrowheads="1"/></pic:cNvPicPr></pic:nvPicPr>`)
	b.WriteString(`<pic:blipFill><a:blip r:embed="` + p.relID + `"/>`)
	if p.cropTop > 0 || p.cropBottom > 0 {
		b.WriteString(`<a:srcRect t="` + itoa(p.cropTop) + `" b="` + itoa(p.cropBottom) + `"/>`)
	}
	b.WriteString(`<a:stretch><a:fillRect/></a:stretch></pic:blipFill>`)
	b.WriteString(`<pic:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext cx="` + cx + `" cy="` + cy + `"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>`)
	b.WriteString(`</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>`)
}

// writeTable writes a table in the Table Grid style. The header row's
// bold and tint come from the style's first-row formatting and are
// repeated on the cells, since not every reader applies conditional
// table formatting.
func writeTable(b *bytes.Buffer, t *table) {
	total := 0
	for _, w := range t.widths {
		total += w
	}
	b.WriteString(`<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="` + itoa(total) + `" w:type="dxa"/>`)
	if t.indent > 0 {
		b.WriteString(`<w:tblInd w:w="` + itoa(t.indent) + `" w:type="dxa"/>`)
	}
	b.WriteString(`<w:tblLayout w:type="fixed"/>`)
	b.WriteString(`<w:tblLook w:val="04A0" w:firstRow="1" w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="1" w:noVBand="1"/></w:tblPr>`)
	b.WriteString(`<w:tblGrid>`)
	for _, w := range t.widths {
		b.WriteString(`<w:gridCol w:w="` + itoa(w) + `"/>`)
	}
	b.WriteString(`</w:tblGrid>`)
	for i, row := range t.rows {
		b.WriteString(`<w:tr>`)
		if i == 0 {
			b.WriteString(`<w:trPr><w:cantSplit/><w:tblHeader/></w:trPr>`)
		} else {
			b.WriteString(`<w:trPr><w:cantSplit/></w:trPr>`)
		}
		for j, c := range row {
			b.WriteString(`<w:tc><w:tcPr><w:tcW w:w="` + itoa(t.widths[j]) + `" w:type="dxa"/>`)
			if i == 0 {
				b.WriteString(`<w:shd w:val="clear" w:color="auto" w:fill="` + headerFill + `"/>`)
			}
			b.WriteString(`</w:tcPr>`)
			for _, p := range c.paras {
				writeParagraph(b, p)
			}
			b.WriteString(`</w:tc>`)
		}
		b.WriteString(`</w:tr>`)
	}
	b.WriteString(`</w:tbl>`)
}

// rightToLeft reports whether the paragraph's first strong letter is
// right-to-left.
func (p *paragraph) rightToLeft() bool {
	for _, r := range p.runs {
		if r.text == "" {
			continue
		}
		if fonts.HasRTL(r.text) {
			return fonts.BaseRTL(r.text)
		}
		for _, c := range r.text {
			if unicode.IsLetter(c) {
				return false
			}
		}
	}
	return false
}
