package docx

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Okabe-Ito, the colour-blind safe palette the charts use.
var palette = []color.RGBA{
	{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
}

// chartPNG draws a simple chart: bars from zero when line is false, else
// one line per series on an axis from lo. It stands in for the chart
// renderer's output.
func chartPNG(t testing.TB, title string, labels []string, series [][]float64, line bool, lo float64) []byte {
	t.Helper()
	const w, h = 1600, 1000
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face := func(size float64) font.Face {
		fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			t.Fatal(err)
		}
		return fc
	}
	text := func(s string, x, y int, size float64, c color.Color, centre bool) {
		d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face(size)}
		if centre {
			x -= d.MeasureString(s).Round() / 2
		}
		d.Dot = fixed.P(x, y)
		d.DrawString(s)
	}
	fill := func(r image.Rectangle, c color.Color) {
		draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
	}

	text(title, 120, 90, 48, color.RGBA{40, 40, 40, 255}, false)
	left, right, top, bottom := 160, w-80, 160, h-140
	maxV := 0.0
	for _, s := range series {
		for _, v := range s {
			maxV = max(maxV, v)
		}
	}
	maxV = lo + (maxV-lo)*1.15
	grey := color.RGBA{225, 225, 225, 255}
	for i := 0; i <= 4; i++ {
		y := bottom - (bottom-top)*i/4
		fill(image.Rect(left, y-1, right, y+1), grey)
		text(fmt.Sprintf("%.0f", lo+(maxV-lo)*float64(i)/4), left-20-70, y+12, 32, color.RGBA{90, 90, 90, 255}, false)
	}
	slot := (right - left) / len(labels)
	yOf := func(v float64) int { return bottom - int(float64(bottom-top)*(v-lo)/(maxV-lo)) }
	for i, l := range labels {
		text(l, left+slot*i+slot/2, bottom+50, 34, color.RGBA{60, 60, 60, 255}, true)
	}
	for si, s := range series {
		c := palette[si%len(palette)]
		for i, v := range s {
			if !line {
				bw := slot * 6 / 10 / len(series)
				x0 := left + slot*i + slot*2/10 + bw*si
				fill(image.Rect(x0, yOf(v), x0+bw, bottom), c)
				continue
			}
			x := left + slot*i + slot/2
			if i > 0 {
				px := left + slot*(i-1) + slot/2
				py := yOf(s[i-1])
				for k := 0; k <= 400; k++ {
					xx := px + (x-px)*k/400
					yy := py + (yOf(v)-py)*k/400
					fill(image.Rect(xx-3, yy-3, xx+4, yy+4), c)
				}
			}
			fill(image.Rect(x-9, yOf(v)-9, x+10, yOf(v)+10), c)
		}
	}
	fill(image.Rect(left, bottom, right, bottom+2), color.RGBA{120, 120, 120, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const sampleMarkdown = `# Quarterly Operations Review

This review covers the **third quarter** of the fiscal year for the
logistics division. It compares throughput, cost and service levels with
the plan agreed in June, and lists the actions the steering group asked
for. Figures come from the warehouse system and are *unaudited*; see the
[methodology note](https://example.com/methodology) for definitions.

## Highlights

- Revenue grew to **$4.2M**, 12% above plan.
- On-time delivery reached 97.4%, the best quarter on record.
  - Northern region: 98.1%
  - Southern region: 96.2%, held back by the August storms
- Cost per parcel fell for the third quarter running.

![Quarterly revenue, in thousand dollars](obj3)

## Results by region

| Region | Parcels | On-time | Cost per parcel |
|:-------|--------:|--------:|----------------:|
| North  | 412,900 | 98.1%   | $3.12 |
| South  | 388,150 | 96.2%   | $3.41 |
| East   | 295,400 | 97.9%   | $2.98 |
| West   | 301,720 | 97.2%   | $3.05 |

The southern region's figures include 11 days of reduced capacity. Its cost
per parcel is ~~$3.55~~ $3.41 after the insurance refund was booked.

### Service levels

![On-time delivery by month, in percent](el2)

> Service levels held up through the peak because the new sorting line came
> online two weeks ahead of schedule.

## Actions

1. Extend the sorting line to the southern hub by **November**.
2. Renegotiate the fuel surcharge with the two largest carriers:
   1. carrier A, contract ending in December;
   2. carrier B, contract ending in March.
3. Publish the weekly dashboard at https://example.com/ops.

The export job that feeds the dashboard runs nightly:

` + "```sh" + `
switchyard export --from 2025-07-01 --to 2025-09-30 \
    --format parquet --out s3://ops-reports/q3/
` + "```" + `

Questions go to the operations office at ops@example.com; the raw data is
described in ` + "`reports/q3/schema.json`" + `.

---

*Prepared by the operations analytics team.*
`

// sampleDocument is a realistic report with two charts.
func sampleDocument(t testing.TB) Document {
	t.Helper()
	return Document{
		Title:    "Quarterly Operations Review",
		Markdown: sampleMarkdown,
		Elements: map[string]Image{
			"obj3": {PNG: chartPNG(t, "Revenue by quarter, actual and plan (k$)", []string{"Q4", "Q1", "Q2", "Q3"}, [][]float64{{3100, 3400, 3750, 4200}, {3000, 3300, 3600, 3750}}, false, 0)},
			"el2":  {PNG: chartPNG(t, "On-time delivery, north and south (%)", []string{"Jul", "Aug", "Sep"}, [][]float64{{97.8, 98.4, 98.1}, {96.9, 94.8, 96.9}}, true, 90)},
		},
		Created: time.Date(2025, 10, 6, 9, 0, 0, 0, time.UTC),
	}
}

var update = flag.Bool("update", false, "rewrite testdata/docx-report.docx from the renderer")

// TestSampleIsCurrent keeps the committed sample, whose preview is in
// testdata/docx-report.png, in step with the renderer: a change to the
// output must come with a new sample (go test ./tools/render/docx -run
// TestSampleIsCurrent -update) and a fresh look at the preview.
func TestSampleIsCurrent(t *testing.T) {
	res, _ := renderParts(t, sampleDocument(t))
	golden := filepath.Join("testdata", "docx-report.docx")
	if *update {
		if err := os.WriteFile(golden, res.DOCX, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.DOCX, want) {
		t.Errorf("the sample renders differently from %s; rerun with -update and look at the preview again", golden)
	}
}

// TestWriteSamples writes the sample document to the directory named by
// SWITCHYARD_RENDER_SAMPLES, for conversion with real office software.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES")
	if dir == "" {
		t.Skip("SWITCHYARD_RENDER_SAMPLES is not set")
	}
	res, _ := renderParts(t, sampleDocument(t))
	if err := os.WriteFile(filepath.Join(dir, "docx-report.docx"), res.DOCX, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLibreOfficeConverts checks that LibreOffice opens the sample and
// converts it to PDF without complaint.
func TestLibreOfficeConverts(t *testing.T) {
	if testing.Short() {
		t.Skip("converting with LibreOffice takes seconds")
	}
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("soffice is not installed")
	}
	dir := t.TempDir()
	res, _ := renderParts(t, sampleDocument(t))
	in := filepath.Join(dir, "report.docx")
	if err := os.WriteFile(in, res.DOCX, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(soffice, "--headless", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"), "--convert-to", "pdf", "--outdir", dir, in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	pdf, err := os.ReadFile(filepath.Join(dir, "report.pdf"))
	if err != nil {
		t.Fatalf("no PDF produced: %v\n%s", err, out)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || len(pdf) < 10_000 {
		t.Fatalf("output is not a plausible PDF (%d bytes)\n%s", len(pdf), out)
	}
}
