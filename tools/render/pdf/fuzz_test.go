package pdf

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// FuzzRender checks that any Markdown either renders to a complete PDF
// within the page limit, embedding only known elements, or fails with a
// *render.SourceError; never a panic or an internal error.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		reportMarkdown,
		unicodeMarkdown,
		"# Title\n\n![chart](obj1) and ![missing](obj2)\n",
		"| a | b |\n|--:|:-:|\n| 1 | x |\n| 2 |\n",
		"- a\n  1. b\n     > c\n     > ```\n     > code\n     > ```\n",
		"***bold italic*** ~~gone~~ `code` <br> &amp; &#x1F600; \\*",
		"![](https://example.com/x.png) <https://example.com> www.example.com a@b.co",
		"\u202eRTL override \u05e9\u05dc\u05d5\u05dd \U0001F600\u200d",
	} {
		f.Add(seed)
	}
	elements := map[string]Image{"obj1": {PNG: chartPNG(f, 64, 40, 1), Caption: "c"}}
	f.Fuzz(func(t *testing.T, md string) {
		type out struct {
			res Result
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := Render(context.Background(), Document{Title: md[:min(len(md), 40)], Markdown: md, Elements: elements})
			done <- out{res, err}
		}()
		var o out
		select {
		case o = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Render has not returned after 5 s")
		}
		res, err := o.res, o.err
		if err != nil {
			rendertest.SourceError(t, err)
			return
		}
		if !bytes.HasPrefix(res.PDF, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(res.PDF), []byte("%%EOF")) {
			t.Fatal("output is not a complete PDF")
		}
		if res.Pages < 1 || res.Pages > MaxPages {
			t.Fatalf("Pages = %d", res.Pages)
		}
		for _, id := range res.Embedded {
			if _, ok := elements[id]; !ok {
				t.Fatalf("embedded unknown id %q", id)
			}
		}
	})
}
