package docx

import (
	"bytes"
	"strconv"
)

// Numbering instances. Bulleted lists share one; every numbered list gets
// its own, so that each restarts at its first number.
const (
	bulletNumID = 1
	numberNumID = 2 // used by the List Number styles themselves
)

type orderedList struct {
	level, start int
}

// numbering collects the numbered lists of a document for numbering.xml.
type numbering struct {
	ordered []orderedList // numId 3 onwards
}

// newOrdered returns the numId of a new numbered list whose items sit at
// level and count from start.
func (n *numbering) newOrdered(level, start int) int {
	if start < 0 {
		start = 0
	}
	n.ordered = append(n.ordered, orderedList{level: level, start: start})
	return numberNumID + len(n.ordered)
}

func bulletStyle(level int) string {
	if level == 0 {
		return "ListBullet"
	}
	return "ListBullet" + strconv.Itoa(min(level+1, 3))
}

func numberStyle(level int) string {
	if level == 0 {
		return "ListNumber"
	}
	return "ListNumber" + strconv.Itoa(min(level+1, 3))
}

var (
	bulletGlyphs  = []string{"•", "–", "▪"}
	numberFormats = []string{"decimal", "lowerLetter", "lowerRoman"}
)

// xml writes word/numbering.xml: one abstract definition for bullets, one
// for numbers (1. a. i. repeating), and the instances.
func (n *numbering) xml() []byte {
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<w:numbering xmlns:w="` + nsW + `">`)

	b.WriteString(`<w:abstractNum w:abstractNumId="0"><w:multiLevelType w:val="hybridMultilevel"/>`)
	for lvl := 0; lvl <= maxListLevel; lvl++ {
		writeLevel(&b, lvl, "bullet", bulletGlyphs[lvl%len(bulletGlyphs)])
	}
	b.WriteString(`</w:abstractNum>`)

	b.WriteString(`<w:abstractNum w:abstractNumId="1"><w:multiLevelType w:val="hybridMultilevel"/>`)
	for lvl := 0; lvl <= maxListLevel; lvl++ {
		writeLevel(&b, lvl, numberFormats[lvl%len(numberFormats)], "%"+strconv.Itoa(lvl+1)+".")
	}
	b.WriteString(`</w:abstractNum>`)

	b.WriteString(`<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`)
	b.WriteString(`<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>`)
	for i, o := range n.ordered {
		b.WriteString(`<w:num w:numId="` + strconv.Itoa(numberNumID+1+i) + `"><w:abstractNumId w:val="1"/>`)
		b.WriteString(`<w:lvlOverride w:ilvl="` + strconv.Itoa(o.level) + `"><w:startOverride w:val="` + strconv.Itoa(o.start) + `"/></w:lvlOverride>`)
		b.WriteString(`</w:num>`)
	}
	b.WriteString(`</w:numbering>`)
	return b.Bytes()
}

func writeLevel(b *bytes.Buffer, lvl int, numFmt, text string) {
	ilvl := strconv.Itoa(lvl)
	b.WriteString(`<w:lvl w:ilvl="` + ilvl + `"><w:start w:val="1"/><w:numFmt w:val="` + numFmt + `"/>`)
	b.WriteString(`<w:lvlText w:val="`)
	escape(b, text)
	b.WriteString(`"/><w:lvlJc w:val="left"/>`)
	b.WriteString(`<w:pPr><w:ind w:left="` + strconv.Itoa(listIndent(lvl)) + `" w:hanging="` + strconv.Itoa(listStep) + `"/></w:pPr>`)
	if numFmt == "bullet" {
		// The glyphs are in every text font; no Symbol font needed.
		b.WriteString(`<w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri"/></w:rPr>`)
	}
	b.WriteString(`</w:lvl>`)
}
