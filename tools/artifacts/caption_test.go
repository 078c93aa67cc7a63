package artifacts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

// A chart draws its own title, so a document that embeds it without a
// caption of its own does not print the title again under it.
func TestEmbeddedChartTitleIsNotRepeated(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext not found: install poppler-utils (Debian: apt-get install poppler-utils)")
	}
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	res := h.mustCall(tools.NameCreateDocument, `{"title":"Q1 report","markdown":"# Results\n\n![](obj1)\n"}`)
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, h.files.files[res.Artifacts[0].FileID], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "Revenue") {
		t.Errorf("the chart's title is printed as its caption:\n%s", out)
	}
}
