package pdf

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/switchyardhq/switchyard/tools/render/markdown"
)

// part is a stretch of a paragraph: inline text, or an embedded image that
// interrupts it.
type part struct {
	spans []span
	embed *ast.Image
	id    string
}

// inlines reads the inline children of n set in st. With figures set, an
// image naming an object id ends the text before it and becomes its own
// part; without (headings, table cells) it is shown as a note like any
// other image.
type inlines struct {
	r       *renderer
	figures bool
	parts   []part
}

func (r *renderer) inlineParts(n ast.Node, st style, figures bool) []part {
	c := &inlines{r: r, figures: figures}
	c.children(n, st)
	return c.parts
}

// spans returns the inline text of n as one run of spans.
func (r *renderer) spans(n ast.Node, st style) []span {
	var out []span
	for _, p := range r.inlineParts(n, st, false) {
		out = append(out, p.spans...)
	}
	return out
}

func (c *inlines) add(text string, st style) {
	if text == "" {
		return
	}
	n := len(c.parts)
	if n == 0 || c.parts[n-1].embed != nil {
		c.parts = append(c.parts, part{})
		n++
	}
	// Spans of one style are not joined here (that would copy long
	// paragraphs over and over); lines join them when they are laid out.
	p := &c.parts[n-1]
	p.spans = append(p.spans, span{text: text, st: st})
}

func (c *inlines) children(n ast.Node, st style) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.node(ch, st)
	}
}

func (c *inlines) node(n ast.Node, st style) {
	src := c.r.src
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(src)
		if !n.IsRaw() {
			v = markdown.Unescape(v)
		}
		c.add(c.r.m.clean(string(v), false), st)
		switch {
		case n.HardLineBreak():
			c.add("\n", st)
		case n.SoftLineBreak():
			c.add(" ", st)
		}
	case *ast.String:
		v := n.Value
		if !n.IsRaw() && !n.IsCode() {
			v = markdown.Unescape(v)
		}
		c.add(c.r.m.clean(string(v), false), st)
	case *ast.CodeSpan:
		code := st
		code.face, code.code, code.size = mono, true, st.size*0.9
		var b strings.Builder
		for t := n.FirstChild(); t != nil; t = t.NextSibling() {
			switch t := t.(type) {
			case *ast.Text:
				b.Write(t.Value(src))
			case *ast.String:
				b.Write(t.Value)
			}
		}
		c.add(c.r.m.clean(b.String(), false), code)
	case *ast.Emphasis:
		em := st
		if n.Level >= 2 {
			em.face = em.face.withBold()
		} else {
			em.face = em.face.withItalic()
		}
		c.children(n, em)
	case *east.Strikethrough:
		s := st
		s.strike = true
		c.children(n, s)
	case *ast.Link:
		c.children(n, linked(st, string(n.Destination)))
	case *ast.AutoLink:
		label := string(n.Label(src))
		dest := string(n.URL(src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
			dest = "mailto:" + dest
		} else if !strings.Contains(dest, "://") && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
			dest = "https://" + dest
		}
		c.add(c.r.m.clean(label, false), linked(st, dest))
	case *ast.Image:
		if id, ok := markdown.EmbedID(string(n.Destination)); ok && c.figures {
			c.parts = append(c.parts, part{embed: n, id: id})
			return
		}
		note := st
		note.face, note.color, note.link = italic, mutedColor, ""
		alt := strings.TrimSpace(markdown.PlainText(n, src))
		if alt == "" {
			alt = string(n.Destination)
		}
		c.add("[image not included: "+c.r.m.clean(alt, false)+"]", note)
	case *ast.RawHTML:
		// Raw HTML is not rendered, but a <br> still breaks the line.
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			tag := strings.ToLower(strings.ReplaceAll(string(seg.Value(src)), " ", ""))
			if tag == "<br>" || tag == "<br/>" {
				c.add("\n", st)
			}
		}
	default:
		c.children(n, st)
	}
}

// linked returns st as a link to dest when dest is a web or mail address;
// other destinations (relative paths, anchors, scripts) stay plain text.
func linked(st style, dest string) style {
	d := strings.ToLower(strings.TrimSpace(dest))
	if strings.HasPrefix(d, "http://") || strings.HasPrefix(d, "https://") || strings.HasPrefix(d, "mailto:") {
		st.link = strings.TrimSpace(dest)
		st.color = linkColor
	}
	return st
}
