package pdf

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// tenPages is about ten pages of text with three 1600×1000 charts and a
// table.
func tenPages(b testing.TB) Document {
	var md strings.Builder
	els := map[string]Image{}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("obj%d", i)
		els[id] = Image{PNG: chartPNG(b, 1600, 1000, i), Caption: "Chart " + id}
		fmt.Fprintf(&md, "## Section %d\n\n", i)
		for range 16 {
			md.WriteString("Revenue grew in every region, led by **Enterprise** contracts and the new *annual* plans; margins improved as hosting costs fell. See [the note](https://example.com) and `query.sql` for details. ")
			md.WriteString(strings.Repeat("Further discussion of the drivers, risks and outlook follows here. ", 5) + "\n\n")
		}
		fmt.Fprintf(&md, "![Chart %d](%s)\n\n- first point\n- second point\n  - nested detail\n\n", i, id)
	}
	md.WriteString("| Region | Revenue | Growth |\n|---|---|---|\n")
	for i := range 40 {
		fmt.Fprintf(&md, "| Region %d | %d,%03d | %d.%d %% |\n", i, 10+i, i*7, i%20, i%10)
	}
	return Document{Title: "Benchmark report", Markdown: md.String(), Elements: els}
}

func BenchmarkRender10Pages3Charts(b *testing.B) {
	d := tenPages(b)
	b.ReportAllocs()
	pages := 0
	for b.Loop() {
		res, err := Render(context.Background(), d)
		if err != nil {
			b.Fatal(err)
		}
		pages = res.Pages
	}
	b.ReportMetric(float64(pages), "pages")
}

// BenchmarkRenderShaped renders about ten pages of Hindi, Thai and emoji,
// every word drawn as outlines.
func BenchmarkRenderShaped(b *testing.B) {
	var md strings.Builder
	for i := range 60 {
		fmt.Fprintf(&md, "## खंड %d\n\n", i)
		md.WriteString(strings.Repeat("नमस्ते दुनिया, क्षत्रिय। इस तिमाही में दिल्ली के ग्राहक बढ़े। ", 4))
		md.WriteString("สวัสดีชาวโลก ภาษาไทย 🚀 😀\n\n")
	}
	d := Document{Title: "Shaped benchmark", Markdown: md.String()}
	b.ReportAllocs()
	pages := 0
	for b.Loop() {
		res, err := Render(context.Background(), d)
		if err != nil {
			b.Fatal(err)
		}
		pages = res.Pages
	}
	b.ReportMetric(float64(pages), "pages")
}
