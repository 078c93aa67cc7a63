// Package markdown reads the Markdown subset the document renderers share
// (PDF and docx), so that one source reads the same in both: CommonMark
// with GitHub's tables and strikethrough, and bare URLs turned into links.
package markdown

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/switchyardhq/switchyard/storage"
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
	if _, _, ok := storage.ParseObjectID(id); !ok {
		return "", false
	}
	return id, true
}
