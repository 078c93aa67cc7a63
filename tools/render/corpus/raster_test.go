package corpus

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	xdraw "golang.org/x/image/draw"
)

// dpi is the resolution pages are rasterised at: enough to see a glyph,
// a bullet or a table rule, small enough for goldens of a few kilobytes
// and a corpus test of seconds.
const dpi = 50

// pictureSide is the longest side charts and diagrams are scaled to.
const pictureSide = 480

// needTool returns the path of an external program the corpus needs, or
// fails the test with how to install it: a corpus that is not compared
// must not pass.
func needTool(t *testing.T, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed; the visual corpus needs it: %s", name, install)
	}
	return path
}

// pdfPages rasterises the first max pages of the PDF at path.
func pdfPages(t *testing.T, pdftoppm, path string, max int) []image.Image {
	t.Helper()
	prefix := path + ".page"
	cmd := exec.Command(pdftoppm, "-r", strconv.Itoa(dpi), "-png", "-f", "1", "-l", strconv.Itoa(max), path, prefix)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm %s: %v\n%s", filepath.Base(path), err, out)
	}
	files, err := filepath.Glob(prefix + "-*.png")
	if err != nil || len(files) == 0 {
		t.Fatalf("pdftoppm wrote no pages for %s (%v)", filepath.Base(path), err)
	}
	// pdftoppm pads page numbers to the width of the page count, so the
	// names sort in page order.
	sort.Strings(files)
	pages := make([]image.Image, len(files))
	for i, f := range files {
		pages[i] = readPNG(t, f)
	}
	return pages
}

// officeToPDF converts the files to PDFs beside them with one LibreOffice
// start, whose profile lives in dir. filter is LibreOffice's PDF export of
// the files' kind (writer_pdf_Export, calc_pdf_Export); only the first
// pages are exported, as a 10,000-row workbook prints 336 pages.
// fonts is the fontconfig file LibreOffice runs with (officeFonts).
func officeToPDF(t *testing.T, soffice, dir, fonts, filter string, pages int, files []string) {
	t.Helper()
	if len(files) == 0 {
		return
	}
	to := fmt.Sprintf(`pdf:%s:{"PageRange":{"type":"string","value":"1-%d"}}`, filter, pages)
	args := append([]string{"--headless", "-env:UserInstallation=file://" + filepath.Join(dir, "profile"), "--convert-to", to, "--outdir", dir}, files...)
	cmd := exec.Command(soffice, args...)
	cmd.Env = append(os.Environ(), "FONTCONFIG_FILE="+fonts)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	for _, f := range files {
		if _, err := os.Stat(pdfBeside(f)); err != nil {
			t.Fatalf("LibreOffice did not convert %s: %v\n%s", filepath.Base(f), err, out)
		}
	}
}

// pdfBeside is the PDF LibreOffice writes for an office file.
func pdfBeside(file string) string {
	return file[:len(file)-len(filepath.Ext(file))] + ".pdf"
}

// shrink scales a chart's or diagram's PNG so that its longest side is
// pictureSide.
func shrink(t *testing.T, data []byte) image.Image {
	t.Helper()
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the renderer's PNG does not decode: %v", err)
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w >= h {
		w, h = pictureSide, max(1, h*pictureSide/w)
	} else {
		w, h = max(1, w*pictureSide/h), pictureSide
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.BiLinear.Scale(dst, dst.Bounds(), src, b, xdraw.Src, nil)
	return dst
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
