package corpus

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// officePackages are the Debian packages whose fonts LibreOffice may use
// in the corpus: those scripts/fonts.sh --tests installs, and LibreOffice's
// own OpenSymbol. Other fonts a machine has would change what LibreOffice
// substitutes: Carlito for Calibri, say, or Microsoft's Arial.
//
// fonts-liberation, which chromium (scripts/browser.sh) depends on, is
// left out on purpose. Word files declare Arial for complex scripts
// (w:cs), and fontconfig aliases Arial to Liberation Sans, a family
// Debian ships twice: 1.07 in fonts-liberation, 2.1 in fonts-liberation2,
// which LibreOffice only recommends. 2.x has Hebrew and 1.x has not, so
// with 2.x Hebrew runs are set in Liberation Sans and with 1.x alone in
// the fallback DejaVu Sans: the same file rendered differently on
// machines with the same scripts run. fonts-noto-mono, whose Noto Sans
// Mono sets Consolas, is only a recommendation of fonts-droid-fallback,
// so fonts.sh installs it by name; fonts-dejavu-extra, which Java pulls
// in, is not needed. fonts-noto-color-emoji is left out too: LibreOffice
// 7.4's PDF export draws its bitmap glyphs as blanks (and takes ★ and ✓
// from it as well), so Word files' emoji are drawn from Symbola, in black
// and white.
var officePackages = []string{
	"fonts-noto-core", "fonts-noto-mono", "fonts-noto-cjk", "fonts-droid-fallback",
	"fonts-nanum", "fonts-symbola", "fonts-dejavu-core", "fonts-liberation2", "fonts-opensymbol",
}

// liberation2 is fontconfig's 16.16 fontversion of Liberation 2.0.
const liberation2 = 2 << 16

// officeFonts writes the fontconfig file LibreOffice runs with into dir
// and returns its path: the system's configuration, with only the font
// files of officePackages.
func officeFonts(t *testing.T, dir string) string {
	t.Helper()
	files := packageFonts(t)
	system := os.Getenv("FONTCONFIG_FILE")
	if system == "" {
		system = "/etc/fonts/fonts.conf"
	}
	var conf bytes.Buffer
	conf.WriteString(`<?xml version="1.0"?>` + "\n<fontconfig>\n<include>")
	escape(t, &conf, system)
	// An accepted path is used even when a rejectfont glob matches it.
	// fontconfig filters the directories it walks too, so the fonts'
	// directories are accepted up to the root.
	conf.WriteString("</include>\n<selectfont>\n<rejectfont><glob>*</glob></rejectfont>\n<acceptfont>\n")
	accepted := map[string]bool{}
	for _, f := range files {
		for p := f; p != "/" && p != "." && !accepted[p]; p = filepath.Dir(p) {
			accepted[p] = true
			conf.WriteString("<glob>")
			escape(t, &conf, p)
			conf.WriteString("</glob>\n")
		}
	}
	conf.WriteString("</acceptfont>\n</selectfont>\n</fontconfig>\n")
	path := filepath.Join(dir, "fonts.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// packageFonts lists the font files of officePackages, failing the test
// when one is not installed.
func packageFonts(t *testing.T) []string {
	t.Helper()
	dpkg := needTool(t, "dpkg-query", "the corpus's goldens are drawn with Debian's font packages (scripts/fonts.sh --tests)")
	out, err := exec.Command(dpkg, append([]string{"-L"}, officePackages...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-query: %v\n%s\nrun scripts/fonts.sh --tests as root", err, out)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\n") {
		switch strings.ToLower(filepath.Ext(f)) {
		case ".ttf", ".ttc", ".otf":
			if strings.ContainsAny(f, "*?[") {
				// fontconfig would read the name as a pattern.
				t.Fatalf("font file %q has glob characters in its name", f)
			}
			files = append(files, f)
		}
	}
	return files
}

func escape(t *testing.T, buf *bytes.Buffer, s string) {
	t.Helper()
	if err := xml.EscapeText(buf, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// TestOfficeFonts checks that LibreOffice's fontconfig sees only the
// fonts of officePackages, among them a Liberation Sans with Hebrew, and
// no Liberation font older than 2.0.
func TestOfficeFonts(t *testing.T) {
	conf := officeFonts(t, t.TempDir())
	allowed := map[string]bool{}
	for _, f := range packageFonts(t) {
		allowed[f] = true
	}
	cmd := exec.Command(needTool(t, "fc-list", "apt-get install fontconfig"), "-f", "%{fontversion}\t%{family[0]}\t%{lang}\t%{file}\n")
	cmd.Env = append(os.Environ(), "FONTCONFIG_FILE="+conf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fc-list: %v", err)
	}
	fonts, hebrew := 0, false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 {
			continue
		}
		fonts++
		if !allowed[f[3]] {
			t.Errorf("%s is visible to LibreOffice; it is none of %v", f[3], officePackages)
		}
		if !strings.HasPrefix(f[1], "Liberation ") {
			continue
		}
		if v, err := strconv.Atoi(f[0]); err != nil || v < liberation2 {
			t.Errorf("%s (fontversion %s) is visible to LibreOffice", f[3], f[0])
		}
		if f[1] == "Liberation Sans" && strings.Contains("|"+f[2]+"|", "|he|") {
			hebrew = true
		}
	}
	if fonts == 0 || !hebrew {
		t.Errorf("LibreOffice sees %d fonts, none a Liberation Sans with Hebrew:\n%s", fonts, out)
	}
}
