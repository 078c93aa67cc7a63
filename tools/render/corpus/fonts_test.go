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

// liberation2 is the first version of the Liberation fonts, as
// fontconfig's 16.16 fontversion, made from Google's Arimo, Tinos and
// Cousine: besides the Latin, Greek and Cyrillic of 1.x it has Hebrew.
const liberation2 = 2 << 16

// officeFonts writes the fontconfig file LibreOffice runs with into dir
// and returns its path: the system's configuration, without the
// Liberation fonts older than 2.0.
//
// Word files declare Arial for complex scripts (w:cs), and fontconfig
// aliases Arial to Liberation Sans. Debian ships that family twice, in
// fonts-liberation (1.07, which chromium depends on) and
// fonts-liberation2 (2.1, which LibreOffice only recommends), so a
// machine may have either or both. 2.x has Hebrew and 1.x has not: with
// 2.x LibreOffice sets Hebrew runs in Liberation Sans, with 1.x alone in
// the fallback DejaVu Sans, and the same file renders differently.
// Hiding 1.x, and requiring 2.x, which scripts/fonts.sh --tests
// installs, gives every machine the first, as a desktop with
// LibreOffice's recommended fonts has.
func officeFonts(t *testing.T, dir string) string {
	t.Helper()
	fcList := needTool(t, "fc-list", "apt-get install fontconfig")
	out, err := exec.Command(fcList, "-f", "%{fontversion}\t%{family[0]}\t%{lang}\t%{file}\n").Output()
	if err != nil {
		t.Fatalf("fc-list: %v", err)
	}
	var old []string
	hebrew := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 || !strings.HasPrefix(f[1], "Liberation ") {
			continue
		}
		// Sans, Serif, Mono and Sans Narrow come as a set, and a
		// document's Times New Roman or Courier New resolves the way
		// Arial does, so the whole older set goes.
		v, err := strconv.Atoi(f[0])
		if err != nil || v < liberation2 {
			old = append(old, f[3])
			continue
		}
		if f[1] == "Liberation Sans" && hasLang(f[2], "he") {
			hebrew = true
		}
	}
	if !hebrew {
		t.Fatal("Liberation Sans 2 is not installed; the visual corpus sets Word files' Hebrew in it: run scripts/fonts.sh --tests (or apt-get install fonts-liberation2)")
	}

	system := os.Getenv("FONTCONFIG_FILE")
	if system == "" {
		system = "/etc/fonts/fonts.conf"
	}
	var conf bytes.Buffer
	conf.WriteString(`<?xml version="1.0"?>` + "\n<fontconfig>\n<include>")
	escape(t, &conf, system)
	conf.WriteString("</include>\n<selectfont><rejectfont>\n")
	for _, file := range old {
		conf.WriteString("<glob>")
		escape(t, &conf, file)
		conf.WriteString("</glob>\n")
	}
	conf.WriteString("</rejectfont></selectfont>\n</fontconfig>\n")
	path := filepath.Join(dir, "fonts.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func escape(t *testing.T, buf *bytes.Buffer, s string) {
	t.Helper()
	if err := xml.EscapeText(buf, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// hasLang reports whether fc-list's lang field, languages joined by |,
// has lang.
func hasLang(field, lang string) bool {
	for _, l := range strings.Split(field, "|") {
		if l == lang {
			return true
		}
	}
	return false
}

// TestOfficeFontsHideLiberation1 checks that LibreOffice's fontconfig
// sees Liberation Sans 2 and no Liberation font older than 2.0.
func TestOfficeFontsHideLiberation1(t *testing.T) {
	conf := officeFonts(t, t.TempDir())
	cmd := exec.Command(needTool(t, "fc-list", "apt-get install fontconfig"), "-f", "%{fontversion}\t%{family[0]}\t%{file}\n")
	cmd.Env = append(os.Environ(), "FONTCONFIG_FILE="+conf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fc-list: %v", err)
	}
	sans := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || !strings.HasPrefix(f[1], "Liberation ") {
			continue
		}
		if v, err := strconv.Atoi(f[0]); err != nil || v < liberation2 {
			t.Errorf("%s (fontversion %s) is visible to LibreOffice", f[2], f[0])
		}
		if f[1] == "Liberation Sans" {
			sans++
		}
	}
	if sans == 0 {
		t.Errorf("no Liberation Sans is visible to LibreOffice:\n%s", out)
	}
}
