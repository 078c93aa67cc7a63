package docx

// Page geometry. Word measures the page in twips (1/20 pt, 1/1440 in)
// and drawings in EMU (1/914400 in, so 635 EMU to the twip).
const (
	pageWidth  = 11906 // A4, 210 mm
	pageHeight = 16838 // A4, 297 mm
	margin     = 1417  // 25 mm
	textWidth  = pageWidth - 2*margin
	textHeight = pageHeight - 2*margin

	emuPerTwip = 635
	emuPerPx   = 9525 // at 96 dpi, Word's pixel

	// maxPictureHeight keeps a tall image with its caption on one page.
	maxPictureHeight = int64(textHeight) * emuPerTwip * 70 / 100

	// listStep is the indent of each list level, in twips.
	listStep = 360
	// maxListLevel is the deepest level numbering.xml defines (0-based).
	maxListLevel = 8

	// cellMargin is the left and right padding of a table cell, in twips.
	cellMargin = 100
)

// listIndent is where the text of a list item at level starts, in twips.
func listIndent(level int) int { return listStep * (level + 1) }

// Spacing and indents the converter sets on single paragraphs, in twips.
const (
	quoteIndent     = 284 // Quote style's left indent
	codeIndent      = 57  // Code style's left indent
	listEndSpace    = 160 // after the last item of a list
	afterTableSpace = 200 // above a paragraph that follows a table
)
