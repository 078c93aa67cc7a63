package pdf

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// wordBoxes returns the left and right edges (points) of every word of
// the first page that pdftotext finds, by word.
func wordBoxes(t *testing.T, pdf []byte) map[string][][2]float64 {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext not found: install poppler-utils")
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-bbox", "-f", "1", "-l", "1", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`<word xMin="([0-9.]+)" yMin="[0-9.]+" xMax="([0-9.]+)" yMax="[0-9.]+">([^<]*)</word>`)
	boxes := map[string][][2]float64{}
	for _, m := range re.FindAllSubmatch(out, -1) {
		x0, _ := strconv.ParseFloat(string(m[1]), 64)
		x1, _ := strconv.ParseFloat(string(m[2]), 64)
		w := string(bytes.TrimSpace(m[3]))
		boxes[w] = append(boxes[w], [2]float64{x0, x1})
	}
	return boxes
}

// A right-to-left list has its markers at the right margin, right of
// their items; a left-to-right list beside it keeps them at the left.
func TestRightToLeftListMarkers(t *testing.T) {
	res := renderOK(t, Document{Markdown: "- كراسي مكتبية\n- طاولات عمل\n\nText.\n\n1. שולחן\n2. כיסא\n\nMore.\n\n- chairs\n"})
	boxes := wordBoxes(t, res.PDF)
	right := newRenderer(context.Background(), Document{}, nil).x1
	bullets := boxes["•"]
	if len(bullets) != 3 {
		t.Fatalf("%d bullets, want 3: %v", len(bullets), boxes)
	}
	for i, b := range bullets[:2] {
		if b[1] < right-20 {
			t.Errorf("bullet %d of the Arabic list at x %.0f–%.0f, not at the right margin (%.0f)", i+1, b[0], b[1], right)
		}
	}
	if b := bullets[2]; b[0] > 100 {
		t.Errorf("bullet of the English list at x %.0f, not at the left margin", b[0])
	}
	for _, num := range []string{"1.", "2."} {
		if bs := boxes[num]; len(bs) != 1 || bs[0][1] < right-20 {
			t.Errorf("number %s of the Hebrew list at %v, not at the right margin (%.0f)", num, bs, right)
		}
	}
	// The items stand left of their markers. (pdftotext -bbox gives
	// Hebrew words in display order.)
	if ws, num := boxes["אסיכ"], boxes["2."]; len(ws) != 1 || len(num) != 1 || ws[0][1] > num[0][0] {
		t.Errorf("item at %v, its number at %v", ws, num)
	}
}
