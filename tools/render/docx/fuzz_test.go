package docx

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// FuzzRender feeds arbitrary Markdown to Render. Whatever the source, the
// result is either a *render.SourceError or a package whose XML parts
// parse, embedding only objects that exist.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		sampleMarkdown,
		"# t\n\n- a\n  1. b\n     > c\n\n| a | b |\n|---|--:|\n| ![x](obj1) | 2 |",
		"![](obj1)![](obj2)![](el1) [l](https://x.y/\x00) <br> \x01\x02\ufffe",
		"***~~`x`~~***\n\n```\n\t\n```\n\n---\n\n1. \n2.",
		"> - [a](mailto:) [b](http://) <https://a.b>\n>\n> ```\n> q\n> ```",
	} {
		f.Add(seed)
	}
	img := smallPNG(f, 30, 20)
	elements := map[string]Image{"obj1": {PNG: img}, "el1": {PNG: img, Caption: "c"}}
	f.Fuzz(func(t *testing.T, md string) {
		res, err := Render(context.Background(), Document{Title: "Fuzz", Markdown: md, Elements: elements})
		if err != nil {
			rendertest.SourceError(t, err)
			return
		}
		for _, id := range res.Embedded {
			if _, ok := elements[id]; !ok {
				t.Fatalf("embedded unknown object %s", id)
			}
		}
		parts := unzip(t, res.DOCX)
		for _, name := range []string{"word/document.xml", "word/numbering.xml", "word/_rels/document.xml.rels", "docProps/core.xml"} {
			dec := xml.NewDecoder(bytes.NewReader(parts[name]))
			for {
				if _, err := dec.Token(); err != nil {
					if err != io.EOF {
						t.Fatalf("%s: %v", name, err)
					}
					break
				}
			}
		}
	})
}
