package docx

// The document is built as a list of blocks first and serialised after,
// so that a block can still be adjusted once its neighbours are known
// (the space after a list, a separator between two tables).

// block is a *paragraph or a *table.
type block interface{ isBlock() }

// Paragraph style ids. The names Word shows (and matches built-in
// features on) are in styles.go.
const (
	styleNormal       = "Normal"
	styleTitle        = "Title"
	styleQuote        = "Quote"
	styleCode         = "Code"
	styleCaption      = "Caption"
	styleFigure       = "Figure"
	styleTableText    = "TableText"
	styleListContinue = "ListContinue"
)

// Character style ids.
const (
	styleCodeChar  = "CodeChar"
	styleHyperlink = "Hyperlink"
)

// unset marks an optional twips value that the paragraph leaves to its
// style.
const unset = -1

type paragraph struct {
	style string
	// numID and level put the paragraph in a list; numID 0: not in one.
	numID, level int
	// indent overrides the style's left indent, in twips.
	indent int
	// spaceBefore and spaceAfter override the style's spacing, in twips.
	spaceBefore, spaceAfter int
	align                   string // "", "left", "center", "right"
	bottomRule              bool   // a thematic break
	keepNext                bool   // keep on the page of the next paragraph
	breakAfter              bool   // may end a page although its style keeps it with the next
	runs                    []run
}

func newParagraph(style string) *paragraph {
	return &paragraph{style: style, indent: unset, spaceBefore: unset, spaceAfter: unset}
}

func (*paragraph) isBlock() {}

// empty reports whether p shows nothing.
func (p *paragraph) empty() bool {
	if p.bottomRule {
		return false
	}
	for _, r := range p.runs {
		if r.brk || r.pic != nil || r.text != "" {
			return false
		}
	}
	return true
}

type format struct {
	bold, italic, strike, code bool
}

// run is text in one format, a line break or an inline picture.
// Consecutive runs with the same link are written inside one hyperlink
// element.
type run struct {
	text string
	brk  bool     // a line break instead of text
	pic  *picture // an image instead of text
	format
	link string // relationship id of an external hyperlink
}

// picture is an inline image.
type picture struct {
	relID  string
	id     int // drawing object id, unique in the document
	name   string
	descr  string
	cx, cy int64 // size in EMU
	// cropTop and cropBottom cut a part out of the image, in cropWhole
	// units of its height from its top and bottom edge.
	cropTop, cropBottom int
}

type table struct {
	// widths of the columns, in twips.
	widths []int
	// indent from the left margin, in twips (tables inside list items).
	indent int
	// rows; the first is the header.
	rows [][]cell
}

func (*table) isBlock() {}

type cell struct {
	paras []*paragraph
}
