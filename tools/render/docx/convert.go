package docx

import (
	"context"
	"strings"

	"github.com/switchyardhq/switchyard/tools/render/markdown"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// converter turns a Markdown tree into blocks. It is used for one
// document and is not safe for concurrent use.
type converter struct {
	ctx      context.Context
	src      []byte
	doc      Document
	title    string // the core title property
	blocks   []block
	rels     *relationships
	media    mediaSet
	lists    numbering
	pictures int // drawing ids handed out
}

func newConverter(ctx context.Context, src []byte, d Document) *converter {
	return &converter{ctx: ctx, src: src, doc: d, title: strings.TrimSpace(cleanText(d.Title)), rels: newRelationships()}
}

// scope is where a block is placed.
type scope struct {
	level  int   // list level of the enclosing list item; -1 outside lists
	indent int   // left indent of the enclosing list item's text, twips
	width  int64 // width available to pictures, EMU
	quote  bool  // inside a block quote
}

func topScope() scope {
	return scope{level: -1, width: int64(textWidth) * emuPerTwip}
}

func (c *converter) add(b ...block) { c.blocks = append(c.blocks, b...) }

// document converts the whole tree.
func (c *converter) document(root ast.Node) error {
	first := root.FirstChild()
	if c.title != "" {
		p := newParagraph(styleTitle)
		p.runs = []run{{text: c.title}}
		c.add(p)
		// Models often repeat the title as the first heading.
		if h, ok := first.(*ast.Heading); ok && h.Level == 1 && sameText(markdown.PlainText(h, c.src), c.title) {
			first = first.NextSibling()
		}
	} else if h, ok := first.(*ast.Heading); ok && h.Level == 1 {
		c.title = strings.TrimSpace(cleanText(markdown.PlainText(h, c.src)))
	}
	for n := first; n != nil; n = n.NextSibling() {
		if err := c.block(n, topScope()); err != nil {
			return err
		}
	}
	c.blocks = separateTables(c.blocks)
	return nil
}

func (c *converter) block(n ast.Node, sc scope) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	switch n := n.(type) {
	case *ast.Heading:
		return c.paragraphs(n, c.headingParagraph(n.Level, sc), format{}, sc)
	case *ast.Paragraph, *ast.TextBlock:
		return c.paragraphs(n, c.bodyParagraph(sc), format{}, sc)
	case *ast.ThematicBreak:
		p := newParagraph(styleNormal)
		p.bottomRule = true
		p.indent = indentOr(sc.indent)
		c.add(p)
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		c.code(n, sc)
	case *ast.Blockquote:
		sc.quote = true
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			if err := c.block(ch, sc); err != nil {
				return err
			}
		}
	case *ast.List:
		return c.list(n, sc)
	case *east.Table:
		return c.table(n, sc)
	case *ast.HTMLBlock:
		// Raw HTML is not rendered.
	default:
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			if err := c.block(ch, sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// indentOr returns a list indent as a paragraph override: unset outside
// lists, so that the style's indent applies.
func indentOr(indent int) int {
	if indent == 0 {
		return unset
	}
	return indent
}

func (c *converter) headingParagraph(level int, sc scope) *paragraph {
	p := newParagraph(headingStyle(level))
	p.indent = indentOr(sc.indent)
	return p
}

func (c *converter) bodyParagraph(sc scope) *paragraph {
	if sc.quote {
		p := newParagraph(styleQuote)
		if sc.indent > 0 {
			p.indent = sc.indent + quoteIndent
		}
		return p
	}
	if sc.level >= 0 {
		p := newParagraph(styleListContinue)
		p.indent = sc.indent
		return p
	}
	return newParagraph(styleNormal)
}

// headingStyle maps Markdown heading levels to Heading 1-4; levels 5
// and 6 share Heading 4, which is as deep as a report usually goes.
func headingStyle(level int) string {
	level = min(max(level, 1), 4)
	return "Heading" + string(rune('0'+level))
}

func (c *converter) code(n ast.Node, sc scope) {
	p := newParagraph(styleCode)
	if sc.indent > 0 {
		p.indent = sc.indent + codeIndent
	}
	lines := n.Lines()
	var text []string
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(c.src)), "\r\n")
		text = append(text, cleanText(strings.ReplaceAll(line, "\t", "    ")))
	}
	for len(text) > 0 && strings.TrimSpace(text[len(text)-1]) == "" {
		text = text[:len(text)-1]
	}
	for i, line := range text {
		if i > 0 {
			p.runs = append(p.runs, run{brk: true})
		}
		if line != "" {
			p.runs = append(p.runs, run{text: line})
		}
	}
	c.add(p)
}

func (c *converter) list(l *ast.List, sc scope) error {
	level := min(sc.level+1, maxListLevel)
	ordered := l.IsOrdered()
	numID := bulletNumID
	style := bulletStyle(level)
	if ordered {
		numID = c.lists.newOrdered(level, l.Start)
		style = numberStyle(level)
	}
	inner := scope{
		level:  level,
		indent: listIndent(level),
		width:  int64(textWidth-listIndent(level)) * emuPerTwip,
		quote:  sc.quote,
	}
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		numbered := false
		for ch := item.FirstChild(); ch != nil; ch = ch.NextSibling() {
			switch ch.(type) {
			case *ast.Paragraph, *ast.TextBlock:
				if numbered {
					break
				}
				numbered = true
				p := newParagraph(style)
				p.numID, p.level = numID, level
				if err := c.paragraphs(ch, p, format{}, inner); err != nil {
					return err
				}
				continue
			}
			if !numbered {
				// An item that starts with a nested list or a code block
				// still shows its bullet.
				numbered = true
				p := newParagraph(style)
				p.numID, p.level = numID, level
				c.add(p)
			}
			if err := c.block(ch, inner); err != nil {
				return err
			}
		}
		if !numbered {
			p := newParagraph(style)
			p.numID, p.level = numID, level
			c.add(p)
		}
	}
	if sc.level < 0 && len(c.blocks) > 0 {
		// Separate the list from what follows as a paragraph would be.
		if p, ok := c.blocks[len(c.blocks)-1].(*paragraph); ok && p.numID != 0 {
			p.spaceAfter = listEndSpace
		}
	}
	return nil
}

// separateTables puts an empty paragraph between adjacent tables, which
// Word would otherwise merge, and after a table that ends the document.
func separateTables(blocks []block) []block {
	out := make([]block, 0, len(blocks)+1)
	for i, b := range blocks {
		out = append(out, b)
		if _, ok := b.(*table); !ok {
			continue
		}
		if i+1 < len(blocks) {
			if p, ok := blocks[i+1].(*paragraph); ok {
				// A paragraph right after a table gets air above it.
				if p.spaceBefore == unset && !strings.HasPrefix(p.style, "Heading") {
					p.spaceBefore = afterTableSpace
				}
				continue
			}
		}
		p := newParagraph(styleNormal)
		p.spaceAfter = 0
		out = append(out, p)
	}
	return out
}

// sameText compares two titles the way a reader would.
func sameText(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}
