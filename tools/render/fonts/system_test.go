package fonts

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/font/gofont/goregular"
)

// TestFallbacksCoverScripts fails, rather than skips, on a machine
// without the system fonts: documents there would lose their non-Latin
// text.
func TestFallbacksCoverScripts(t *testing.T) {
	for _, c := range []struct {
		script string
		r      rune
		pdf    bool // must be drawable in a PDF (TrueType, Basic Multilingual Plane)
	}{
		{"CJK", '東', true},
		{"Hangul", '서', true},
		{"Hebrew", 'ש', true},
		{"Arabic", 'ب', true},
		{"Arabic presentation form", '\uFE91', true},
		{"Devanagari", 'क', true},
		{"Thai", 'ก', true},
		{"Vietnamese", 'ạ', true},
		{"emoji", '😀', false},
		{"symbol", '★', true},
	} {
		found := false
		for _, fb := range Fallbacks() {
			if (!c.pdf || fb.TrueType) && fb.Has(c.r) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no font found for %s (%q); install Debian's fonts-noto-core fonts-noto-cjk fonts-droid-fallback fonts-nanum fonts-symbola (scripts/fonts.sh does, as root) or set %s", c.script, c.r, DirEnv)
		}
	}
}

func TestConfiguredDirectoryComesFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Custom.ttf"), goregular.TTF, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a font"), 0o644); err != nil {
		t.Fatal(err)
	}
	fbs := discover([]string{dir}, systemDirs)
	if len(fbs) == 0 || fbs[0].Name != "Custom" {
		t.Fatalf("chain = %v, want Custom first", chainNames(fbs))
	}
	if !fbs[0].TrueType || !fbs[0].Has('A') || fbs[0].Has('東') {
		t.Errorf("Custom: TrueType %v, has A %v, has 東 %v", fbs[0].TrueType, fbs[0].Has('A'), fbs[0].Has('東'))
	}
	for _, fb := range fbs[1:] {
		if fb.Name == "notes" {
			t.Error("a text file joined the chain")
		}
	}
}

func TestCollectionIsNotTrueType(t *testing.T) {
	for _, fb := range Fallbacks() {
		if filepath.Ext(fb.Path) == ".ttc" && fb.TrueType {
			t.Errorf("%s is a collection and cannot be embedded in a PDF", fb.Path)
		}
		if fb.TrueType && fb.TTF() == nil {
			t.Errorf("%s: no font file", fb.Path)
		}
	}
}

func chainNames(fbs []*Fallback) []string {
	var out []string
	for _, fb := range fbs {
		out = append(out, fb.Name)
	}
	return out
}
