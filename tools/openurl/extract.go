package openurl

import (
	"bytes"
	"context"
	"io"
	"path"
	"regexp"
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/switchyardhq/switchyard/internal/clip"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// extraction is the readable part of a page.
type extraction struct {
	title    string
	markdown string
}

// newConverter returns the HTML to Markdown converter; one serves every
// call, as it is safe for concurrent use.
func newConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	// Controls and drawings carry no text a reader needs.
	for _, tag := range []string{"svg", "button", "select", "canvas", "template", "dialog"} {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityStandard)
	}
	return conv
}

// extract returns the readable text of p as Markdown: for HTML the
// article readability finds (the whole body when it finds none), for
// plain text the text itself.
func extract(ctx context.Context, conv *converter.Converter, p page) (extraction, error) {
	text, err := decode(p)
	if err != nil {
		return extraction{}, err
	}
	if p.mediaType == "text/plain" {
		return extraction{title: oneLine(plainTitle(p)), markdown: tidy(text)}, nil
	}

	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return extraction{}, err
	}
	parser := readability.NewParser()
	article, err := parser.ParseDocument(doc, p.url)
	node := article.Node
	title := oneLine(article.Title())
	if err != nil || node == nil || strings.TrimSpace(textOf(node)) == "" {
		node = bodyOf(doc)
	}
	if title == "" {
		title = oneLine(plainTitle(p))
	}
	stripHeavy(node)
	md, err := conv.ConvertNode(node, converter.WithContext(ctx), converter.WithDomain(p.url.String()))
	if err != nil {
		return extraction{}, err
	}
	return extraction{title: title, markdown: tidy(string(md))}, nil
}

// decode returns the body as UTF-8, honouring the charset the response
// or the document declares.
func decode(p page) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(p.body), p.contentType)
	if err != nil {
		return strings.ToValidUTF8(string(p.body), "\uFFFD"), nil
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// maxTitleChars bounds a title; pages that stuff keywords into <title>
// would otherwise spend the model's budget on it.
const maxTitleChars = 300

// oneLine makes s fit the "# <title>" heading: one line, spaces
// collapsed, bounded.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if cut, ok := cutRunes(s, maxTitleChars); ok {
		return strings.TrimRight(cut, " ") + "…"
	}
	return s
}

// plainTitle names a page that has no title of its own: the last path
// element, else the host.
func plainTitle(p page) string {
	if name := path.Base(p.url.Path); name != "/" && name != "." && name != "" {
		return name
	}
	return p.url.Hostname()
}

func bodyOf(doc *html.Node) *html.Node {
	var body *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && body == nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Body {
				body = c
				return
			}
			walk(c)
		}
	}
	walk(doc)
	if body == nil {
		return doc
	}
	return body
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// stripHeavy removes images inlined as data: URIs, which would fill the
// model's budget with base64.
func stripHeavy(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && (c.DataAtom == atom.Img || c.DataAtom == atom.Source) && inlineData(c) {
			n.RemoveChild(c)
		} else {
			stripHeavy(c)
		}
		c = next
	}
}

func inlineData(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "src", "srcset":
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "data:") {
				return true
			}
		}
	}
	return false
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy trims the text and keeps at most one blank line in a row.
func tidy(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = blankLines.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// cutRunes returns s cut to at most n characters, at a rune boundary,
// and whether it was cut.
func cutRunes(s string, n int) (string, bool) {
	c := clip.Runes(s, n)
	return c, len(c) < len(s)
}
