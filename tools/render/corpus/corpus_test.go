package corpus

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/render/chart"
	"github.com/switchyardhq/switchyard/tools/render/diagram"
	"github.com/switchyardhq/switchyard/tools/render/docx"
	"github.com/switchyardhq/switchyard/tools/render/pdf"
	"github.com/switchyardhq/switchyard/tools/render/xlsx"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the renderers")

// kind is the renderer of an entry.
type kind string

const (
	kindPDF     kind = "pdf"
	kindDOCX    kind = "docx"
	kindXLSX    kind = "xlsx"
	kindChart   kind = "chart"
	kindDiagram kind = "diagram"
)

// entry is one deliverable of the corpus.
type entry struct {
	name string
	kind kind
	// src is the source in testdata/src: Markdown for documents, the
	// create_chart arguments for charts, DOT for diagrams, the
	// create_spreadsheet arguments for workbooks.
	src string
	// gen makes the source instead, for sources too long to keep.
	gen func() string
	// title is a document's title.
	title string
	// embeds maps a document's object ids to the entries drawn for them.
	embeds map[string]string
	// pages is how many pages are compared at most. Zero: 4.
	pages int
	// aspect and theme are a diagram's.
	aspect, theme string
	// letter sets a PDF on US Letter instead of A4.
	letter bool
}

// corpus is every deliverable, pictures first: documents embed them.
var corpus = []entry{
	{name: "chart-grouped-bar", kind: kindChart, src: "grouped-bar.json"},
	{name: "chart-wide-line", kind: kindChart, src: "wide-line.json"},
	{name: "chart-tall-bar", kind: kindChart, src: "tall-bar.json"},
	{name: "chart-pie", kind: kindChart, src: "pie.json"},
	{name: "chart-scatter-dark", kind: kindChart, src: "scatter-dark.json"},
	{name: "chart-stacked-area", kind: kindChart, src: "stacked-area.json"},
	{name: "chart-cjk-bar", kind: kindChart, src: "cjk-bar.json"},
	{name: "diagram-flowchart", kind: kindDiagram, src: "flowchart.dot"},
	{name: "diagram-tall", kind: kindDiagram, src: "tall.dot", aspect: "portrait"},
	{name: "diagram-architecture", kind: kindDiagram, src: "architecture.dot"},
	{name: "diagram-architecture-dark", kind: kindDiagram, src: "architecture.dot", theme: "dark"},
	{name: "diagram-fifty-dark", kind: kindDiagram, src: "fifty-nodes.dot", theme: "dark", aspect: "square"},
	{name: "diagram-onboarding", kind: kindDiagram, src: "onboarding.dot", aspect: "portrait"},

	{name: "pdf-report", kind: kindPDF, src: "report.md", title: "Q3 2026 Business Review",
		embeds: map[string]string{"obj1": "chart-grouped-bar", "obj2": "chart-wide-line", "obj3": "diagram-flowchart"}, pages: 6},
	{name: "pdf-cjk-report", kind: kindPDF, src: "cjk-report.md", title: "2026年度 第3四半期 業績報告",
		embeds: map[string]string{"obj1": "chart-cjk-bar"}},
	{name: "pdf-rtl-letter", kind: kindPDF, src: "rtl-letter.md", title: "אישור הזמנה · تأكيد الطلب", letter: true},
	{name: "pdf-scripts", kind: kindPDF, src: "scripts.md", title: "Scripts: Ελληνικά, Кириллица, 日本語, עברית"},
	{name: "pdf-shaped-scripts", kind: kindPDF, src: "shaped-scripts.md", title: "तिमाही रिपोर्ट · Shaped scripts"},
	{name: "pdf-long-table", kind: kindPDF, gen: longTable, title: "Customer contracts, 90 rows", pages: 4},
	{name: "pdf-minutes", kind: kindPDF, gen: minutes, title: "Steering committee minutes", pages: 3},
	{name: "docx-memo", kind: kindDOCX, src: "memo.md", title: "Office move and new working hours"},
	{name: "docx-emoji", kind: kindDOCX, src: "emoji.md", title: "Launch update 🚀"},
	{name: "docx-cjk-report", kind: kindDOCX, src: "cjk-report.md", title: "2026年度 第3四半期 業績報告",
		embeds: map[string]string{"obj1": "chart-cjk-bar"}},
	{name: "docx-rtl-letter", kind: kindDOCX, src: "rtl-letter.md", title: "אישור הזמנה · تأكيد الطلب"},
	{name: "docx-report", kind: kindDOCX, src: "report.md", title: "Q3 2026 Business Review",
		embeds: map[string]string{"obj1": "chart-grouped-bar", "obj2": "chart-wide-line", "obj3": "diagram-flowchart"}},
	{name: "pdf-release-report", kind: kindPDF, src: "release-report.md", title: "Release process, Q4 2026",
		embeds: map[string]string{"obj1": "diagram-tall", "obj2": "diagram-architecture-dark"}, pages: 3},
	{name: "docx-release-report", kind: kindDOCX, src: "release-report.md", title: "Release process, Q4 2026",
		embeds: map[string]string{"obj1": "diagram-tall", "obj2": "diagram-architecture-dark"}, pages: 3},
	{name: "pdf-onboarding", kind: kindPDF, src: "onboarding.md", title: "Customer onboarding",
		embeds: map[string]string{"obj1": "diagram-onboarding"}, pages: 4},
	{name: "docx-onboarding", kind: kindDOCX, src: "onboarding.md", title: "Customer onboarding",
		embeds: map[string]string{"obj1": "diagram-onboarding"}, pages: 4},
	{name: "xlsx-sales", kind: kindXLSX, src: "sales.json", pages: 2},
	{name: "xlsx-orders-10k", kind: kindXLSX, gen: orders10k, pages: 1},
}

// created is every document's date, so that the title blocks stay put.
var created = time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC)

// TestCorpus renders every deliverable to pictures and compares them with
// testdata/golden.
func TestCorpus(t *testing.T) {
	pdftoppm := needTool(t, "pdftoppm", "apt-get install poppler-utils")
	soffice := needTool(t, "soffice", "apt-get install libreoffice-writer-nogui libreoffice-calc-nogui (or libreoffice)")
	ctx := context.Background()
	dir := t.TempDir()
	start := time.Now()

	pictures := map[string][]byte{} // chart and diagram PNGs by entry name
	got := map[string][]image.Image{}
	pdfs := map[string]string{} // entry name to the PDF to rasterise
	var writer, calc []string   // Word and Excel files for LibreOffice
	most := 0                   // pages compared of any entry
	for _, e := range corpus {
		src := e.source(t)
		switch e.kind {
		case kindChart:
			var args struct {
				Title string          `json:"title"`
				Spec  json.RawMessage `json:"spec"`
			}
			if err := json.Unmarshal([]byte(src), &args); err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			spec, err := chart.Parse(args.Spec)
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			png, err := chart.Render(ctx, args.Title, spec)
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			pictures[e.name] = png
			got[e.name] = []image.Image{shrink(t, png)}
		case kindDiagram:
			png, err := diagram.Render(ctx, diagram.Diagram{Source: src, Aspect: e.aspect, Theme: e.theme})
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			pictures[e.name] = png
			got[e.name] = []image.Image{shrink(t, png)}
		case kindPDF:
			d := pdf.Document{Title: e.title, Markdown: src, Created: created, Elements: map[string]pdf.Image{}}
			if e.letter {
				d.PageSize = pdf.Letter
			}
			for id, name := range e.embeds {
				d.Elements[id] = pdf.Image{PNG: picture(t, pictures, name)}
			}
			res, err := pdf.Render(ctx, d)
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			pdfs[e.name] = e.write(t, dir, "pdf", res.PDF)
		case kindDOCX:
			d := docx.Document{Title: e.title, Markdown: src, Created: created, Elements: map[string]docx.Image{}}
			for id, name := range e.embeds {
				d.Elements[id] = docx.Image{PNG: picture(t, pictures, name)}
			}
			res, err := docx.Render(ctx, d)
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			f := e.write(t, dir, "docx", res.DOCX)
			writer = append(writer, f)
			pdfs[e.name] = pdfBeside(f)
		case kindXLSX:
			wb, err := xlsx.Parse([]byte(src))
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			wb.Time = created
			data, err := xlsx.Render(ctx, wb)
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			f := e.write(t, dir, "xlsx", data)
			calc = append(calc, f)
			pdfs[e.name] = pdfBeside(f)
		}
		most = max(most, e.maxPages())
	}
	t.Logf("rendered in %v", time.Since(start))
	fonts := officeFonts(t, dir)
	officeToPDF(t, soffice, dir, fonts, "writer_pdf_Export", most, writer)
	officeToPDF(t, soffice, dir, fonts, "calc_pdf_Export", most, calc)
	t.Logf("LibreOffice done at %v", time.Since(start))
	for _, e := range corpus {
		if f, ok := pdfs[e.name]; ok {
			got[e.name] = pdfPages(t, pdftoppm, f, e.maxPages())
		}
	}

	golden := filepath.Join("testdata", "golden")
	for _, e := range corpus {
		t.Run(e.name, func(t *testing.T) {
			pics := got[e.name]
			if *update {
				e.rewrite(t, golden, pics)
				return
			}
			want := e.goldens(t, golden)
			if len(want) != len(pics) {
				t.Fatalf("%d pictures rendered, %d golden; if the change is meant, rerun with -update and look at the pictures", len(pics), len(want))
			}
			for i, path := range want {
				d := compare(readPNG(t, path), pics[i], pageTolerance)
				t.Logf("%s: %d pixels differ", filepath.Base(path), d.Pixels)
				switch {
				case d.Size:
					t.Errorf("%s: size %v, golden %v", filepath.Base(path), pics[i].Bounds().Size(), readPNG(t, path).Bounds().Size())
				case d.Pixels > pageTolerance.Pixels:
					t.Errorf("%s: %d pixels differ (budget %d); %s", filepath.Base(path), d.Pixels, pageTolerance.Pixels, keepFailure(t, path, pics[i], d.Mask))
				}
			}
		})
	}
}

// source reads or makes e's source.
func (e entry) source(t *testing.T) string {
	t.Helper()
	if e.gen != nil {
		return e.gen()
	}
	data, err := os.ReadFile(filepath.Join("testdata", "src", e.src))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (e entry) maxPages() int {
	if e.pages == 0 {
		return 4
	}
	return e.pages
}

// write stores a rendered file in dir for the rasterisers.
func (e entry) write(t *testing.T, dir, ext string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, e.name+"."+ext)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// goldenName matches the golden pictures of an entry: name.png for a
// picture, name-<page>.png for pages.
func (e entry) goldenName() *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(e.name) + `(-[0-9]+)?\.png$`)
}

// goldens lists e's golden pictures in page order.
func (e entry) goldens(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, de := range entries {
		if e.goldenName().MatchString(de.Name()) {
			paths = append(paths, filepath.Join(dir, de.Name()))
		}
	}
	// Pages are numbered from 1 to at most 9, so the names sort in
	// page order.
	return paths
}

// rewrite replaces e's goldens with pics.
func (e entry) rewrite(t *testing.T, dir string, pics []image.Image) {
	t.Helper()
	for _, old := range e.goldens(t, dir) {
		if err := os.Remove(old); err != nil {
			t.Fatal(err)
		}
	}
	for i, pic := range pics {
		name := e.name + ".png"
		if e.kind != kindChart && e.kind != kindDiagram {
			name = fmt.Sprintf("%s-%d.png", e.name, i+1)
		}
		writePNG(t, filepath.Join(dir, name), pic)
	}
}

// picture is the PNG an earlier entry drew.
func picture(t *testing.T, pictures map[string][]byte, name string) []byte {
	t.Helper()
	png, ok := pictures[name]
	if !ok {
		t.Fatalf("%s is embedded before it is drawn; list it earlier in the corpus", name)
	}
	return png
}

// keepFailure writes the rendered picture and a mask of its differences
// where they outlive the test, and says where.
func keepFailure(t *testing.T, golden string, got, mask image.Image) string {
	t.Helper()
	dir := os.Getenv("SWITCHYARD_CORPUS_OUT")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "switchyard-corpus")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "could not keep the pictures: " + err.Error()
	}
	base := strings.TrimSuffix(filepath.Base(golden), ".png")
	writePNG(t, filepath.Join(dir, base+".got.png"), got)
	writePNG(t, filepath.Join(dir, base+".diff.png"), mask)
	return "rendered picture and differences (red) in " + dir
}
