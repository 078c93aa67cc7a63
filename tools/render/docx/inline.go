package docx

import (
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/markdown"
)

// inlines collects the runs of one Markdown paragraph (or heading, or
// table cell). An embedded image ends the paragraph: the image gets a
// centred paragraph of its own and a caption under it, and the text after
// it goes on in a new paragraph.
type inlines struct {
	c     *converter
	sc    scope
	proto *paragraph
	cur   *paragraph
	out   []*paragraph
	err   error
}

// paragraphs converts the inline children of n into paragraphs shaped
// like proto and adds them to the document.
func (c *converter) paragraphs(n ast.Node, proto *paragraph, base format, sc scope) error {
	ps, err := c.inlineParagraphs(n, proto, base, sc)
	for _, p := range ps {
		c.add(p)
	}
	return err
}

func (c *converter) inlineParagraphs(n ast.Node, proto *paragraph, base format, sc scope) ([]*paragraph, error) {
	in := &inlines{c: c, sc: sc, proto: proto}
	cp := *proto
	in.cur = &cp
	in.walk(n, base, "")
	in.flush(true)
	return in.out, in.err
}

func (in *inlines) walk(n ast.Node, f format, link string) {
	src := in.c.src
	for ch := n.FirstChild(); ch != nil && in.err == nil; ch = ch.NextSibling() {
		switch x := ch.(type) {
		case *ast.Text:
			v := x.Segment.Value(src)
			if !x.IsRaw() {
				v = markdown.Unescape(v)
			}
			in.text(string(v), f, link)
			switch {
			case x.HardLineBreak():
				in.cur.runs = append(in.cur.runs, run{brk: true, link: link})
			case x.SoftLineBreak():
				in.text(" ", f, link)
			}
		case *ast.String:
			v := x.Value
			if !x.IsRaw() && !x.IsCode() {
				v = markdown.Unescape(v)
			}
			in.text(string(v), f, link)
		case *ast.CodeSpan:
			cf := f
			cf.code = true
			in.text(markdown.PlainText(x, src), cf, link)
		case *ast.Emphasis:
			ef := f
			if x.Level >= 2 {
				ef.bold = true
			} else {
				ef.italic = true
			}
			in.walk(x, ef, link)
		case *east.Strikethrough:
			sf := f
			sf.strike = true
			in.walk(x, sf, link)
		case *ast.Link:
			in.walk(x, f, in.c.linkID(string(x.Destination)))
		case *ast.AutoLink:
			target := string(x.URL(src))
			if x.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(target), "mailto:") {
				target = "mailto:" + target
			}
			in.text(string(x.Label(src)), f, in.c.linkID(target))
		case *ast.Image:
			in.image(x, f, link)
		case *ast.RawHTML:
			if isBreakTag(x, src) {
				in.cur.runs = append(in.cur.runs, run{brk: true, link: link})
			}
		default:
			in.walk(x, f, link)
		}
	}
}

// text appends s in format f. Runs that look the same are merged when
// the paragraph ends (mergeRuns), which keeps the XML small.
func (in *inlines) text(s string, f format, link string) {
	if s == "" {
		return
	}
	s = cleanText(s)
	if s == "" {
		return
	}
	in.cur.runs = append(in.cur.runs, run{text: s, format: f, link: link})
}

// mergeRuns joins neighbouring text runs of the same format and link.
func mergeRuns(runs []run) []run {
	out := runs[:0]
	for i := 0; i < len(runs); {
		r := runs[i]
		j := i + 1
		if r.pic == nil && !r.brk {
			for j < len(runs) && runs[j].pic == nil && !runs[j].brk && runs[j].format == r.format && runs[j].link == r.link {
				j++
			}
			if j > i+1 {
				var b strings.Builder
				for _, q := range runs[i:j] {
					b.WriteString(q.text)
				}
				r.text = b.String()
			}
		}
		out = append(out, r)
		i = j
	}
	return out
}

// image embeds the object an image names. Images that name no object are
// not fetched: their alt text stands in for them.
func (in *inlines) image(x *ast.Image, f format, link string) {
	c := in.c
	alt := strings.TrimSpace(markdown.PlainText(x, c.src))
	id, ok := markdown.EmbedID(string(x.Destination))
	if !ok {
		in.text(alt, f, link)
		return
	}
	img, ok := c.doc.Elements[id]
	if !ok {
		in.err = unknownID(id, c.doc.Elements)
		return
	}
	item, err := c.media.add(id, img, c.rels)
	if err != nil {
		in.err = err
		return
	}
	caption := alt
	if caption == "" {
		caption = strings.TrimSpace(img.Caption)
	}
	caption = cleanText(caption)
	parts := pictureParts(item, in.sc.width)
	if in.cur.numID != 0 && in.cur.empty() {
		// A list item that starts with an image keeps its number on a
		// line of its own: beside a picture it would sit at its foot.
		in.cur.runs = nil
		in.out = append(in.out, in.cur)
		in.cur = in.proto.continuation(in.sc)
	} else {
		in.flush(false)
	}
	for i, part := range parts {
		c.pictures++
		pic := &picture{
			relID:      item.relID,
			id:         c.pictures,
			name:       "Picture " + strconv.Itoa(c.pictures),
			descr:      caption,
			cx:         part.cx,
			cy:         part.cy,
			cropTop:    part.top,
			cropBottom: cropWhole - part.bottom,
		}
		if i > 0 && caption != "" {
			pic.descr = caption + " (continued)"
		}
		fig := newParagraph(styleFigure)
		fig.indent = indentOr(in.sc.indent)
		fig.runs = []run{{pic: pic}}
		// Each part but the last ends its page; the last keeps its
		// caption with it.
		fig.breakAfter = i < len(parts)-1
		in.out = append(in.out, fig)
	}
	if caption != "" {
		under := newParagraph(styleCaption)
		under.indent = indentOr(in.sc.indent)
		under.runs = []run{{text: caption}}
		in.out = append(in.out, under)
	}
	in.cur = in.proto.continuation(in.sc)
}

// flush ends the current paragraph, dropping it when it shows nothing
// (unless it is the last one and carries a list number, which must show).
func (in *inlines) flush(last bool) {
	p := in.cur
	p.runs = trimRuns(mergeRuns(p.runs))
	if !p.empty() || (last && p.numID != 0 && len(in.out) == 0) {
		in.out = append(in.out, p)
	}
	in.cur = in.proto.continuation(in.sc)
}

// continuation is the paragraph that takes up the text after an image
// that interrupted p.
func (p *paragraph) continuation(sc scope) *paragraph {
	q := *p
	q.runs = nil
	switch {
	case p.numID != 0:
		q.numID, q.level = 0, 0
		q.style = styleListContinue
		q.indent = sc.indent
	case strings.HasPrefix(p.style, "Heading"), p.style == styleTitle:
		q.style = styleNormal
	}
	return &q
}

// trimRuns drops the white space at both ends of a paragraph, which the
// Markdown does not mean to show.
func trimRuns(runs []run) []run {
	for len(runs) > 0 && runs[0].pic == nil && !runs[0].brk {
		runs[0].text = strings.TrimLeft(runs[0].text, " ")
		if runs[0].text != "" {
			break
		}
		runs = runs[1:]
	}
	for k := len(runs) - 1; k >= 0 && runs[k].pic == nil; k = len(runs) - 1 {
		if runs[k].brk {
			runs = runs[:k] // a trailing hard break shows nothing
			continue
		}
		runs[k].text = strings.TrimRight(runs[k].text, " ")
		if runs[k].text != "" {
			break
		}
		runs = runs[:k]
	}
	return runs
}

// linkID returns the relationship id of an external link to dest, or ""
// when dest is not a link a reader can follow (a relative path, an anchor,
// a javascript: URL): such links render as their text.
func (c *converter) linkID(dest string) string {
	dest = strings.TrimSpace(dest)
	u, err := url.Parse(dest)
	if err != nil {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return ""
		}
	case "mailto":
		if u.Opaque == "" {
			return ""
		}
	default:
		return ""
	}
	return c.rels.hyperlink(uriTarget(dest))
}

// uriTarget percent-encodes what a relationship target must not hold
// (spaces, non-ASCII letters, a few ASCII signs): Word reports a document
// with such a target as unreadable.
func uriTarget(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch <= ' ' || ch >= 0x7F || strings.IndexByte("\"<>\\^`{|}", ch) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[ch>>4])
			b.WriteByte(hex[ch&15])
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}

func isBreakTag(x *ast.RawHTML, src []byte) bool {
	var b strings.Builder
	for i := 0; i < x.Segments.Len(); i++ {
		s := x.Segments.At(i)
		b.Write(s.Value(src))
	}
	tag := strings.ToLower(strings.Join(strings.Fields(b.String()), ""))
	return tag == "<br>" || tag == "<br/>"
}

// unknownID is the error for an embed that names no object the caller
// gave, written so the model can correct its Markdown.
func unknownID(id string, known map[string]Image) error {
	if len(known) == 0 {
		return render.Errorf("![...](%s) names an object this document cannot embed: there are no charts, diagrams or images to embed; remove the image", id)
	}
	ids := make([]string, 0, len(known))
	for k := range known {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	return render.Errorf("![...](%s) names an object this document cannot embed; the objects that can be embedded are %s", id, strings.Join(ids, ", "))
}

// cleanText turns line breaks and tabs inside a run into spaces. Emoji
// stay: they are written in an emoji font (emoji.go).
func cleanText(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}
