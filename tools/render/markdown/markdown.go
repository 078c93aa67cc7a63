// Package markdown reads the Markdown subset the document renderers share
// (PDF and docx), so that one source reads the same in both: CommonMark
// with GitHub's tables and strikethrough, and bare URLs turned into links.
package markdown

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/switchyardhq/switchyard/internal/objectid"
)

var parser = goldmark.New(goldmark.WithExtensions(
	extension.Table,
	extension.Strikethrough,
	extension.Linkify,
)).Parser()

// Parse returns the document tree of src. Text segments of the tree point
// into src, so src must not change while the tree is in use. Raw HTML in
// the source is parsed as HTML nodes, which renderers skip.
func Parse(src []byte) ast.Node {
	return parser.Parse(text.NewReader(src))
}

// EmbedID returns the object id an image destination names, such as
// "obj3" in ![Revenue](obj3) or "el2" in ![](el2), and whether it names
// one. Destinations that are not object ids (URLs, paths) return false:
// documents embed only objects of the conversation, never fetched images.
func EmbedID(destination string) (string, bool) {
	id := strings.TrimSpace(destination)
	if _, _, ok := objectid.Parse(id); !ok {
		return "", false
	}
	return id, true
}

// Unescape resolves the backslash escapes and character references of a
// text segment that is not raw, as an HTML renderer does: "\&" and "&amp;"
// are both "&" on the page.
func Unescape(v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		return v
	}
	return util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(v)))
}

// PlainText is the text under n without formatting, as a reader sees it:
// an image's alt text, a heading's title, a code span's code.
func PlainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			v := n.Value(src)
			if !n.IsRaw() {
				v = Unescape(v)
			}
			b.Write(v)
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.AutoLink:
			b.Write(n.Label(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
