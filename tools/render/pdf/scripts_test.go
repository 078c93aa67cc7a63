package pdf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// scriptLines are one line per script the fallback fonts cover, as a
// reader would type them.
var scriptLines = map[string]string{
	"CJK":        "東京は日本の首都です",
	"Korean":     "서울",
	"Hebrew":     "שלום עולם",
	"Arabic":     "مرحبا بالعالم",
	"Devanagari": "नमस्ते दुनिया",
	"Thai":       "สวัสดีชาวโลก",
	"Vietnamese": "Tiếng Việt có dấu",
	"Greek":      "Καλημέρα",
	"Cyrillic":   "Доброе утро",
	"Symbol":     "☃ ★",
}

// pdftotext reads data back with poppler, as a reader's viewer would.
func pdftotext(t *testing.T, data []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext not found: install poppler-utils (Debian: apt-get install poppler-utils)")
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

func TestScriptsReadBack(t *testing.T) {
	var md bytes.Buffer
	md.WriteString("# Scripts\n\n")
	for name, l := range scriptLines {
		md.WriteString(name + ": " + l + "\n\n")
	}
	md.WriteString("| Script | Sample |\n|---|---|\n| Hebrew | שלום |\n| CJK | 東京 |\n")
	res := renderOK(t, Document{Title: "東京 report", Markdown: md.String()})
	// Arabic comes back in its contextual forms, which compatibility
	// normalisation folds to the letters typed.
	text := norm.NFKC.String(pdftotext(t, res.PDF))
	for name, l := range scriptLines {
		if !strings.Contains(text, l) {
			t.Errorf("%s: %q not read back", name, l)
		}
	}
	if strings.ContainsRune(text, '\uFFFD') {
		t.Error("a replacement character reached the PDF")
	}
}

// TestRightToLeftParagraphFlushRight checks that a Hebrew paragraph is
// drawn in display order and set against the right margin.
func TestRightToLeftParagraphFlushRight(t *testing.T) {
	r := newRenderer(t.Context(), Document{}, nil)
	ls := r.m.breakLines([]span{{r.m.clean("שלום עולם", false), bodyStyle}}, 400)
	v, rtl := r.m.visual(ls[0])
	if !rtl {
		t.Fatal("a Hebrew line is not right to left")
	}
	var got strings.Builder
	for _, f := range v.frags {
		got.WriteString(f.text)
	}
	if got.String() != "םלוע םולש" {
		t.Errorf("display order %q, want %q", got.String(), "םלוע םולש")
	}
}
