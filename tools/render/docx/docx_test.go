package docx

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// styled is the style and text a paragraph is expected to have.
type styled struct{ style, text string }

func TestRenderParagraphStyles(t *testing.T) {
	tests := []struct {
		name     string
		title    string
		markdown string
		want     []styled
	}{
		{
			name:     "title and headings",
			title:    "Annual Report",
			markdown: "# Annual Report\n\nIntro.\n\n# One\n\n## Two\n\n### Three\n\n#### Four\n\n###### Six",
			want: []styled{
				{"Title", "Annual Report"}, {"Normal", "Intro."}, {"Heading1", "One"},
				{"Heading2", "Two"}, {"Heading3", "Three"}, {"Heading4", "Four"}, {"Heading4", "Six"},
			},
		},
		{
			name:     "first heading differs from the title",
			title:    "Report",
			markdown: "# Summary\n\ntext",
			want:     []styled{{"Title", "Report"}, {"Heading1", "Summary"}, {"Normal", "text"}},
		},
		{
			name:     "no title",
			markdown: "# Summary\n\ntext",
			want:     []styled{{"Heading1", "Summary"}, {"Normal", "text"}},
		},
		{
			name:     "quote and code",
			markdown: "> quoted *words*\n\n```go\nfunc main() {\n\tprintln(1)\n}\n```\n\n    indented code",
			want: []styled{
				{"Quote", "quoted words"},
				{"Code", "func main() {\n    println(1)\n}"},
				{"Code", "indented code"},
			},
		},
		{
			name:     "nested lists",
			markdown: "- a\n  - b\n    - c\n- d\n\n1. one\n2. two\n\n   more of two\n\nafter",
			want: []styled{
				{"ListBullet", "a"}, {"ListBullet2", "b"}, {"ListBullet3", "c"}, {"ListBullet", "d"},
				{"ListNumber", "one"}, {"ListNumber", "two"}, {"ListContinue", "more of two"}, {"Normal", "after"},
			},
		},
		{
			name:     "soft and hard breaks",
			markdown: "one\ntwo  \nthree",
			want:     []styled{{"Normal", "one two\nthree"}},
		},
		{
			name:     "raw html and remote images are not rendered as such",
			markdown: "<div>x</div>\n\nsee ![a chart](https://example.com/c.png) here",
			want:     []styled{{"Normal", "see a chart here"}},
		},
		{
			name:     "emoji and other scripts kept",
			markdown: "go🚀! family 👨‍👩‍👧, ok✅ café 日本 مرحبا क्‍ष",
			want:     []styled{{"Normal", "go🚀! family 👨‍👩‍👧, ok✅ café 日本 مرحبا क्‍ष"}},
		},
		{
			name:     "thematic break",
			markdown: "a\n\n---\n\nb",
			want:     []styled{{"Normal", "a"}, {"Normal", ""}, {"Normal", "b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, parts := renderParts(t, Document{Title: tt.title, Markdown: tt.markdown})
			doc := parseDocument(t, parts["word/document.xml"])
			var got []styled
			for _, p := range doc.paras {
				got = append(got, styled{p.style, p.text})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("paragraphs = %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("paragraph %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestRenderStylesAreDefined(t *testing.T) {
	_, parts := renderParts(t, sampleDocument(t))
	var styles struct {
		Styles []struct {
			Type string `xml:"type,attr"`
			ID   string `xml:"styleId,attr"`
			Name struct {
				Val string `xml:"val,attr"`
			} `xml:"name"`
			Outline *struct {
				Val string `xml:"val,attr"`
			} `xml:"pPr>outlineLvl"`
		} `xml:"style"`
	}
	if err := xml.Unmarshal(parts["word/styles.xml"], &styles); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	outline := map[string]string{}
	for _, s := range styles.Styles {
		names[s.ID] = s.Name.Val
		if s.Outline != nil {
			outline[s.ID] = s.Outline.Val
		}
	}
	// Word recognises built-in styles by these names.
	want := map[string]string{
		"Title": "Title", "Heading1": "heading 1", "Heading2": "heading 2", "Heading3": "heading 3",
		"ListBullet": "List Bullet", "ListNumber": "List Number", "TableGrid": "Table Grid",
		"Caption": "caption", "Quote": "Quote", "Hyperlink": "Hyperlink", "Code": "Code",
	}
	for id, name := range want {
		if names[id] != name {
			t.Errorf("style %s is named %q, want %q", id, names[id], name)
		}
	}
	for i, id := range []string{"Heading1", "Heading2", "Heading3", "Heading4"} {
		if outline[id] != string(rune('0'+i)) {
			t.Errorf("%s outline level = %q, want %d", id, outline[id], i)
		}
	}
	// Every style the document uses is defined.
	doc := parseDocument(t, parts["word/document.xml"])
	for _, p := range doc.paras {
		if _, ok := names[p.style]; !ok {
			t.Errorf("paragraph %q uses undefined style %q", p.text, p.style)
		}
	}
}

func TestRenderLists(t *testing.T) {
	md := "1. a\n2. b\n   - inner\n\ntext\n\n3. c\n4. d\n\n- x\n"
	_, parts := renderParts(t, Document{Markdown: md})
	doc := parseDocument(t, parts["word/document.xml"])
	byText := map[string]para{}
	for _, p := range doc.paras {
		byText[p.text] = p
	}
	if a, b := byText["a"], byText["b"]; a.numID == "" || a.numID != b.numID || a.ilvl != "0" {
		t.Errorf("items of one list: a=%+v b=%+v", a, b)
	}
	if in := byText["inner"]; in.numID != "1" || in.ilvl != "1" {
		t.Errorf("nested bullet: numId %q ilvl %q, want 1 and 1", in.numID, in.ilvl)
	}
	if c := byText["c"]; c.numID == byText["a"].numID || c.numID == "" {
		t.Errorf("second numbered list shares numId %q with the first", c.numID)
	}
	if x := byText["x"]; x.numID != "1" {
		t.Errorf("bullet numId = %q, want 1", x.numID)
	}
	// The second numbered list starts at 3, as written.
	num := string(parts["word/numbering.xml"])
	want := `<w:num w:numId="` + byText["c"].numID + `"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="3"/>`
	if !strings.Contains(num, want) {
		t.Errorf("numbering.xml lacks %s", want)
	}
}

func TestRenderInlineFormats(t *testing.T) {
	_, parts := renderParts(t, Document{Markdown: "**b** *i* ~~s~~ `c` ***bi***"})
	body := string(parts["word/document.xml"])
	for _, want := range []string{
		`<w:r><w:rPr><w:b/><w:bCs/></w:rPr><w:t xml:space="preserve">b</w:t></w:r>`,
		`<w:r><w:rPr><w:i/><w:iCs/></w:rPr><w:t xml:space="preserve">i</w:t></w:r>`,
		`<w:r><w:rPr><w:strike/></w:rPr><w:t xml:space="preserve">s</w:t></w:r>`,
		`<w:r><w:rPr><w:rStyle w:val="CodeChar"/></w:rPr><w:t xml:space="preserve">c</w:t></w:r>`,
		`<w:r><w:rPr><w:b/><w:bCs/><w:i/><w:iCs/></w:rPr><w:t xml:space="preserve">bi</w:t></w:r>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("document.xml lacks %s", want)
		}
	}
}

// Escapes and character references are text on the page, as in any
// Markdown viewer; inside code they stay as written.
func TestRenderEscapes(t *testing.T) {
	_, parts := renderParts(t, Document{Markdown: `Profit \& Loss &amp; \*not emphasis\* &#65; ` + "`a\\&b`"})
	body := string(parts["word/document.xml"])
	for _, want := range []string{
		`<w:t xml:space="preserve">Profit &amp; Loss &amp; *not emphasis* A </w:t>`,
		`<w:t xml:space="preserve">a\&amp;b</w:t>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("document.xml lacks %s\n%s", want, body)
		}
	}
}

func TestRenderTable(t *testing.T) {
	md := "| Name | Amount | Note |\n|---|---|:-:|\n| a | 1,200 | x |\n| b | -3.5% | |\n| c | | y |\n\n| k |\n|---|\n| v |\n"
	_, parts := renderParts(t, Document{Markdown: md})
	doc := parseDocument(t, parts["word/document.xml"])
	if len(doc.tables) != 2 {
		t.Fatalf("%d tables, want 2", len(doc.tables))
	}
	tb := doc.tables[0]
	want := [][]string{{"Name", "Amount", "Note"}, {"a", "1,200", "x"}, {"b", "-3.5%", ""}, {"c", "", "y"}}
	if len(tb.rows) != len(want) {
		t.Fatalf("rows = %q, want %q", tb.rows, want)
	}
	for i := range want {
		if strings.Join(tb.rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, tb.rows[i], want[i])
		}
	}
	if !tb.repeat {
		t.Error("header row does not repeat on each page")
	}
	if len(tb.headerFill) != 3 || tb.headerFill[0] != headerFill {
		t.Errorf("header fills = %q, want %s on each cell", tb.headerFill, headerFill)
	}
	jc := map[string]string{}
	for _, p := range doc.paras {
		if p.inTable {
			jc[p.text] = p.jc
			if p.style != styleTableText {
				t.Errorf("cell %q style = %q", p.text, p.style)
			}
		}
	}
	if jc["1,200"] != "right" || jc["Amount"] != "right" {
		t.Errorf("numeric column alignment = %q/%q, want right", jc["Amount"], jc["1,200"])
	}
	if jc["a"] != "" || jc["x"] != "center" {
		t.Errorf("alignment of a = %q, x = %q; want default and center", jc["a"], jc["x"])
	}
	for _, p := range doc.paras {
		if p.text == "Name" && !p.bold {
			t.Error("header cell is not bold")
		}
	}
	body := string(parts["word/document.xml"])
	if strings.Contains(body, "</w:tbl><w:tbl>") {
		t.Error("adjacent tables are not separated; Word would merge them")
	}
	if !strings.HasSuffix(body, `</w:tbl><w:p><w:pPr><w:pStyle w:val="Normal"/><w:spacing w:after="0"/></w:pPr></w:p><w:sectPr>`+body[strings.Index(body, "<w:sectPr>")+len("<w:sectPr>"):]) {
		t.Error("a table that ends the document is not followed by a paragraph")
	}
}

func TestRenderHyperlinks(t *testing.T) {
	md := "[site](https://example.com/a?b=1&c=2) and **[bold `x`](http://example.org)**, " +
		"https://example.net/auto, mail me@example.com, again [site](https://example.com/a?b=1&c=2), " +
		"[bad](javascript:alert(1)) [rel](docs/x.md) [anchor](#top) [z](<https://de.example/Zürich a>)"
	_, parts := renderParts(t, Document{Markdown: md})
	doc := parseDocument(t, parts["word/document.xml"])
	rels := parseRels(t, parts["word/_rels/document.xml.rels"])
	if len(doc.paras) != 1 {
		t.Fatalf("%d paragraphs, want 1", len(doc.paras))
	}
	p := doc.paras[0]
	wantTargets := []string{"https://example.com/a?b=1&c=2", "http://example.org", "https://example.net/auto", "mailto:me@example.com", "https://example.com/a?b=1&c=2", "https://de.example/Z%C3%BCrich%20a"}
	wantTexts := []string{"site", "bold x", "https://example.net/auto", "me@example.com", "site", "z"}
	if len(p.links) != len(wantTargets) {
		t.Fatalf("links %q (texts %q), want %d", p.links, p.linkTexts, len(wantTargets))
	}
	for i, id := range p.links {
		r, ok := rels[id]
		if !ok {
			t.Errorf("hyperlink %d: relationship %s missing", i, id)
			continue
		}
		if r.Target != wantTargets[i] || r.TargetMode != "External" || r.Type != relHyperlink {
			t.Errorf("hyperlink %d: %+v, want external %s", i, r, wantTargets[i])
		}
		if p.linkTexts[i] != wantTexts[i] {
			t.Errorf("hyperlink %d text = %q, want %q", i, p.linkTexts[i], wantTexts[i])
		}
	}
	if p.links[0] != p.links[4] {
		t.Error("the same URL got two relationships")
	}
	if !strings.Contains(p.text, "bad rel anchor") {
		t.Errorf("unsafe and relative links do not render as text: %q", p.text)
	}
}

func TestRenderImages(t *testing.T) {
	wide := chartPNG(t, "wide", []string{"a", "b"}, [][]float64{{1, 2}}, false, 0)
	small := smallPNG(t, 120, 60)
	d := Document{
		Markdown: "text ![Wide chart](obj3) more\n\n- ![](el2)\n\n![again](obj3)\n\n| c |\n|---|\n| ![cell](el2) |",
		Elements: map[string]Image{
			"obj3": {PNG: wide},
			"el2":  {PNG: small, Caption: "Default caption"},
			"obj9": {PNG: wide},
		},
	}
	res, parts := renderParts(t, d)
	if strings.Join(res.Embedded, ",") != "obj3,el2" {
		t.Errorf("Embedded = %q, want [obj3 el2]", res.Embedded)
	}
	doc := parseDocument(t, parts["word/document.xml"])
	rels := parseRels(t, parts["word/_rels/document.xml.rels"])
	var got []styled
	var pics []para
	for _, p := range doc.paras {
		got = append(got, styled{p.style, p.text})
		if len(p.embeds) > 0 {
			pics = append(pics, p)
		}
	}
	want := []styled{
		{"Normal", "text"}, {"Figure", ""}, {"Caption", "Wide chart"}, {"Normal", "more"},
		{"ListBullet", ""}, {"Figure", ""}, {"Caption", "Default caption"},
		{"Figure", ""}, {"Caption", "again"},
		{"TableText", "c"}, {"Figure", ""}, {"Caption", "cell"}, {"Normal", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("paragraphs = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("paragraph %d = %q, want %q", i, got[i], want[i])
		}
	}
	if len(pics) != 4 {
		t.Fatalf("%d pictures, want 4", len(pics))
	}
	for i, p := range pics {
		r, ok := rels[p.embeds[0]]
		if !ok || r.Type != relImage {
			t.Fatalf("picture %d: relationship %s = %+v", i, p.embeds[0], r)
		}
		if _, ok := parts[path.Join("word", r.Target)]; !ok {
			t.Errorf("picture %d: %s is not in the package", i, r.Target)
		}
	}
	if pics[0].embeds[0] != pics[2].embeds[0] {
		t.Error("the same object is stored twice")
	}
	media := 0
	for name := range parts {
		if strings.HasPrefix(name, "word/media/") {
			media++
		}
	}
	if media != 2 {
		t.Errorf("%d media files, want 2", media)
	}
	// The wide chart fills the text width, keeping 1600:1000.
	cx, cy := pics[0].extents[0][0], pics[0].extents[0][1]
	if cx != int64(textWidth)*emuPerTwip {
		t.Errorf("wide image width = %d EMU, want the text width %d", cx, int64(textWidth)*emuPerTwip)
	}
	if ratio := float64(cx) / float64(cy); ratio < 1.59 || ratio > 1.61 {
		t.Errorf("wide image aspect = %.3f, want 1.6", ratio)
	}
	// A small image keeps its size.
	if cx := pics[1].extents[0][0]; cx != 120*emuPerPx {
		t.Errorf("small image width = %d EMU, want %d", cx, 120*emuPerPx)
	}
}

func TestRenderUnknownID(t *testing.T) {
	tests := []struct {
		name     string
		elements map[string]Image
		want     []string
	}{
		{"some known", map[string]Image{"obj3": {PNG: smallPNG(t, 2, 2)}, "el2": {PNG: smallPNG(t, 2, 2)}}, []string{"obj7", "el2, obj3"}},
		{"none known", nil, []string{"obj3", "no charts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(context.Background(), Document{Markdown: "# x\n\n![c](obj3)\n\n![c](obj7)", Elements: tt.elements})
			rendertest.SourceError(t, err, tt.want...)
		})
	}
}

func TestRenderLimits(t *testing.T) {
	big := smallPNG(t, 2, 2)
	tests := []struct {
		name       string
		ctx        func() context.Context
		doc        Document
		wantSource bool
	}{
		{"markdown too long", context.Background, Document{Markdown: strings.Repeat("a", MaxMarkdownBytes+1)}, true},
		{"quotes nested too deeply", context.Background, Document{Markdown: "ok\n\n" + strings.Repeat(">", MaxNesting+1) + " x"}, true},
		{"list markers nested too deeply", context.Background, Document{Markdown: strings.Repeat("- 1. ", MaxNesting/2+1) + "x"}, true},
		{"image too large", context.Background, Document{Markdown: "![x](obj1)", Elements: map[string]Image{"obj1": {PNG: append(big, make([]byte, MaxImageBytes)...)}}}, true},
		{"not an image", context.Background, Document{Markdown: "![x](obj1)", Elements: map[string]Image{"obj1": {PNG: []byte("GIF89a")}}}, false},
		{"canceled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, Document{Markdown: "text"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.ctx(), tt.doc)
			if err == nil {
				t.Fatal("no error")
			}
			var se *render.SourceError
			if errors.As(err, &se) != tt.wantSource {
				t.Errorf("err = %v (%T); want SourceError: %v", err, err, tt.wantSource)
			}
		})
	}
}

func TestRenderAcceptsNestingUpToTheLimit(t *testing.T) {
	md := strings.Repeat("> ", MaxNesting/2) + strings.Repeat("- ", MaxNesting/2) + "deep\n\n* * *\n\n1986. A year, not a list.\n\n2) second"
	if _, err := Render(context.Background(), Document{Markdown: md}); err != nil {
		t.Fatal(err)
	}
}

func TestRenderDeterministic(t *testing.T) {
	d := sampleDocument(t)
	a, err := Render(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.DOCX, b.DOCX) {
		t.Error("the same document rendered to different bytes")
	}
	d.Created = d.Created.Add(time.Hour)
	c, err := Render(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.DOCX, c.DOCX) {
		t.Error("the creation time does not reach the file")
	}
}

func TestRenderCoreProperties(t *testing.T) {
	tests := []struct {
		name, title, markdown string
		created               time.Time
		wantTitle, wantDate   string
	}{
		{"title given", "Q3 <Review> & more", "body", time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), "Q3 <Review> & more", "2025-01-02T02:04:05Z"},
		{"title from heading", "", "# From *Heading*\n\nbody", time.Time{}, "From Heading", "1980-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, parts := renderParts(t, Document{Title: tt.title, Markdown: tt.markdown, Created: tt.created})
			var core struct {
				Title    string `xml:"title"`
				Created  string `xml:"created"`
				Modified string `xml:"modified"`
			}
			if err := xml.Unmarshal(parts["docProps/core.xml"], &core); err != nil {
				t.Fatal(err)
			}
			if core.Title != tt.wantTitle || core.Created != tt.wantDate || core.Modified != tt.wantDate {
				t.Errorf("core = %+v, want title %q dated %s", core, tt.wantTitle, tt.wantDate)
			}
		})
	}
}

// TestPackageIsWellFormed checks the OOXML packaging rules a reader
// relies on: every part has a content type, every relationship target
// exists, and every XML part parses.
func TestPackageIsWellFormed(t *testing.T) {
	res, parts := renderParts(t, sampleDocument(t))
	var types struct {
		Defaults []struct {
			Ext string `xml:"Extension,attr"`
		} `xml:"Default"`
		Overrides []struct {
			Part string `xml:"PartName,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(parts["[Content_Types].xml"], &types); err != nil {
		t.Fatal(err)
	}
	exts := map[string]bool{}
	for _, d := range types.Defaults {
		exts[d.Ext] = true
	}
	overrides := map[string]bool{}
	for _, o := range types.Overrides {
		if _, ok := parts[strings.TrimPrefix(o.Part, "/")]; !ok {
			t.Errorf("content type for missing part %s", o.Part)
		}
		overrides[o.Part] = true
	}
	for name, data := range parts {
		if name == "[Content_Types].xml" {
			continue
		}
		if !overrides["/"+name] && !exts[strings.TrimPrefix(path.Ext(name), ".")] {
			t.Errorf("part %s has no content type", name)
		}
		if strings.HasSuffix(name, ".xml") || strings.HasSuffix(name, ".rels") {
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				_, err := dec.Token()
				if err != nil {
					if err.Error() != "EOF" {
						t.Errorf("%s: %v", name, err)
					}
					break
				}
			}
		}
		if !strings.HasSuffix(name, ".rels") {
			continue
		}
		// A .rels part describes the part in the folder above _rels.
		base := path.Dir(path.Dir(name))
		for _, r := range parseRels(t, data) {
			if r.TargetMode == "External" {
				continue
			}
			target := path.Join(base, r.Target)
			if _, ok := parts[target]; !ok {
				t.Errorf("%s: %s points to missing %s", name, r.ID, target)
			}
		}
	}
	for _, want := range []string{"word/document.xml", "word/styles.xml", "word/numbering.xml", "docProps/core.xml", "_rels/.rels"} {
		if _, ok := parts[want]; !ok {
			t.Errorf("package lacks %s", want)
		}
	}
	if !bytes.HasPrefix(res.DOCX, []byte("PK\x03\x04")) {
		t.Error("not a zip file")
	}
}

func BenchmarkRender(b *testing.B) {
	d := sampleDocument(b)
	// About ten pages: the sample repeated five times, its two charts
	// embedded at each repetition.
	d.Markdown = strings.Repeat(sampleMarkdown, 5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
}
