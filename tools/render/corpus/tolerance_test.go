package corpus

import (
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/pdf"
)

// firstPage renders Markdown to a PDF and rasterises its first page at
// the corpus's resolution, with pdftoppm's extra arguments.
func firstPage(t *testing.T, markdown string, extra ...string) image.Image {
	t.Helper()
	pdftoppm := needTool(t, "pdftoppm", "apt-get install poppler-utils")
	dir := t.TempDir()
	in := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(in, renderPDF(t, markdown), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-r", strconv.Itoa(dpi), "-png", "-singlefile"}, extra...)
	out, err := exec.Command(pdftoppm, append(args, in, filepath.Join(dir, "page"))...).CombinedOutput()
	if err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	return readPNG(t, filepath.Join(dir, "page.png"))
}

// renderPDF renders Markdown to a PDF.
func renderPDF(t *testing.T, markdown string) []byte {
	t.Helper()
	res, err := pdf.Render(context.Background(), pdf.Document{Title: "Tolerance", Markdown: markdown, Created: created})
	if err != nil {
		t.Fatal(err)
	}
	return res.PDF
}

const toleranceText = "Revenue by region, in € thousand:\n\n" +
	"- Germany 14,820\n- France 8,930\n- Benelux 5,260\n\nThe total is 48,200 in all.\n"

// TestToleranceCatchesALostGlyph: a page that lost one narrow letter, a
// digit, or one list marker, differs by more than the budget.
func TestToleranceCatchesALostGlyph(t *testing.T) {
	want := firstPage(t, toleranceText)
	for name, md := range map[string]string{
		"letter l":    "Revenue by region, in € thousand:\n\n- Germany 14,820\n- France 8,930\n- Benelux 5,260\n\nThe total is 48,200 in al.\n",
		"digit 1":     "Revenue by region, in € thousand:\n\n- Germany 4,820\n- France 8,930\n- Benelux 5,260\n\nThe total is 48,200 in all.\n",
		"list marker": "Revenue by region, in € thousand:\n\n- Germany 14,820\n- France 8,930\n\n  Benelux 5,260\n\nThe total is 48,200 in all.\n",
	} {
		d := compare(want, firstPage(t, md), pageTolerance)
		t.Logf("%s: %d pixels differ", name, d.Pixels)
		if d.Size || d.Pixels <= pageTolerance.Pixels {
			t.Errorf("%s: %d pixels differ, within the budget of %d; the corpus would not notice", name, d.Pixels, pageTolerance.Pixels)
		}
	}
}

// TestToleranceAllowsAntialiasing: the same page with its rules and
// shapes anti-aliased differently, or moved by a pixel, is within the
// budget. (Another rasteriser altogether, cairo's, is not: the goldens
// are poppler's.)
func TestToleranceAllowsAntialiasing(t *testing.T) {
	want := firstPage(t, toleranceText)
	for name, got := range map[string]image.Image{
		"thin lines as shapes":    firstPage(t, toleranceText, "-thinlinemode", "shape"),
		"shapes not anti-aliased": firstPage(t, toleranceText, "-aaVector", "no"),
		"shifted a pixel":         shifted(rgba(want), 1, 1),
	} {
		d := compare(want, got, pageTolerance)
		t.Logf("%s: %d pixels differ", name, d.Pixels)
		if d.Size || d.Pixels > pageTolerance.Pixels {
			t.Errorf("%s: %d pixels differ, over the budget of %d", name, d.Pixels, pageTolerance.Pixels)
		}
	}
}

// shifted is img moved right and down, the uncovered edge white.
func shifted(img *image.RGBA, dx, dy int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(b)
	for i := range out.Pix {
		out.Pix[i] = 0xff
	}
	for y := b.Min.Y; y+dy < b.Max.Y; y++ {
		for x := b.Min.X; x+dx < b.Max.X; x++ {
			out.SetRGBA(x+dx, y+dy, img.RGBAAt(x, y))
		}
	}
	return out
}
