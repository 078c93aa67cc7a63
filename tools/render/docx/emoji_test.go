package docx

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fontRun is a text run of document.xml with the fonts its rFonts names.
type fontRun struct {
	text                       string
	ascii, hAnsi, eastAsia, cs string
}

func fontRuns(t *testing.T, data []byte) []fontRun {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var runs []fontRun
	var cur *fontRun
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return runs
		}
		if err != nil {
			t.Fatalf("document.xml: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Space != wNS {
				continue
			}
			switch tok.Name.Local {
			case "r":
				runs = append(runs, fontRun{})
				cur = &runs[len(runs)-1]
			case "rFonts":
				if cur != nil {
					cur.ascii, cur.hAnsi = attr(tok, wNS, "ascii"), attr(tok, wNS, "hAnsi")
					cur.eastAsia, cur.cs = attr(tok, wNS, "eastAsia"), attr(tok, wNS, "cs")
				}
			case "t":
				inText = true
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "t":
				inText = false
			case "r":
				cur = nil
			}
		case xml.CharData:
			if inText && cur != nil {
				cur.text += string(tok)
			}
		}
	}
}

// TestEmojiKeptInAnEmojiFont checks that emoji reach the Word file as
// text, each sequence whole (skin tone, family joined by U+200D, flags,
// a subdivision flag, a keycap) in a run of its own whose four font slots
// name the emoji font, and that the text around them keeps the style's
// fonts.
func TestEmojiKeptInAnEmojiFont(t *testing.T) {
	const (
		family = "👨‍👩‍👧"
		wave   = "👋🏽"
		flags  = "🇫🇷🇯🇵"
		wales  = "🏴\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"
		keycap = "1️⃣"
		ok     = "✅"
		heart  = "❤️"
	)
	md := "Launch " + family + " and " + wave + ", " + flags + " " + wales + " step " + keycap + " done" + ok + " with " + heart + " ★ stays text.\n\n" +
		"| a | b |\n|---|---|\n| 🚀 | x |\n\n**bold 🎉** [link 🔗](https://example.com) שלום 🙂"
	_, parts := renderParts(t, Document{Title: "Emoji", Markdown: md})
	doc := parseDocument(t, parts["word/document.xml"])
	want := "Launch " + family + " and " + wave + ", " + flags + " " + wales + " step " + keycap + " done" + ok + " with " + heart + " ★ stays text."
	if doc.paras[1].text != want {
		t.Errorf("first paragraph reads %q, want %q", doc.paras[1].text, want)
	}

	emoji := map[string]bool{}
	for _, r := range fontRuns(t, parts["word/document.xml"]) {
		inFont := r.ascii == emojiFont && r.hAnsi == emojiFont && r.eastAsia == emojiFont && r.cs == emojiFont
		if inFont {
			emoji[r.text] = true
			continue
		}
		if r.ascii == emojiFont || r.hAnsi == emojiFont || r.eastAsia == emojiFont || r.cs == emojiFont {
			t.Errorf("run %q names the emoji font in some slots only: %+v", r.text, r)
		}
		for _, c := range r.text {
			if c >= 0x1F000 || c == 0x200D || c == 0xFE0F || c == 0x20E3 || c == 0x2705 {
				t.Errorf("run %q holds %U outside the emoji font", r.text, c)
			}
		}
	}
	for _, e := range []string{family, wave, flags, wales, keycap, ok, heart, "🚀", "🎉", "🔗", "🙂"} {
		if !emoji[e] {
			t.Errorf("no run of %q (%+q) alone in the emoji font; emoji runs: %q", e, e, keys(emoji))
		}
	}
	if emoji["★"] {
		t.Error("★, text by default, is set in the emoji font")
	}
	if !strings.Contains(string(parts["word/document.xml"]), "🚀") {
		t.Error("the table cell lost its emoji")
	}
}

func TestSplitEmoji(t *testing.T) {
	tests := []struct {
		in   string
		want []textSegment
	}{
		{"plain", []textSegment{{"plain", false}}},
		{"a🚀b", []textSegment{{"a", false}, {"🚀", true}, {"b", false}}},
		{"🚀🎉", []textSegment{{"🚀🎉", true}}},
		{"x👩‍💻 y", []textSegment{{"x", false}, {"👩‍💻", true}, {" y", false}}},
		{"no 🤷‍♀️.", []textSegment{{"no ", false}, {"🤷‍♀️", true}, {".", false}}},
		{"#️⃣ 7", []textSegment{{"#️⃣", true}, {" 7", false}}},
		{"क्‍ष", []textSegment{{"क्‍ष", false}}}, // a joiner in Devanagari stays with its letters
		{"☃ ✓", []textSegment{{"☃ ✓", false}}},
		{"☀️", []textSegment{{"☀️", true}}},
	}
	for _, tt := range tests {
		got := splitEmoji(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("splitEmoji(%q) = %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("splitEmoji(%q) = %v, want %v", tt.in, got, tt.want)
				break
			}
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLibreOfficeReadsEmoji converts a document with emoji to text with
// LibreOffice: every sequence comes back whole, as typed.
func TestLibreOfficeReadsEmoji(t *testing.T) {
	if testing.Short() {
		t.Skip("converting with LibreOffice takes seconds")
	}
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("soffice is not installed")
	}
	seqs := []string{"👩‍💻", "👋🏽", "🇫🇷", "1️⃣", "✅", "🚀", "👨‍👩‍👧"}
	md := "Team " + seqs[0] + " waves " + seqs[1] + " from " + seqs[2] + ", step " + seqs[3] + " done " + seqs[4] + ".\n\n- launch " + seqs[5] + "\n\n| who |\n|---|\n| " + seqs[6] + " |\n"
	dir := t.TempDir()
	res, _ := renderParts(t, Document{Title: "Emoji", Markdown: md})
	in := filepath.Join(dir, "emoji.docx")
	if err := os.WriteFile(in, res.DOCX, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(soffice, "--headless", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"), "--convert-to", "txt:Text (encoded):UTF8", "--outdir", dir, in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "emoji.txt"))
	if err != nil {
		t.Fatalf("no text produced: %v\n%s", err, out)
	}
	for _, s := range seqs {
		if !strings.Contains(string(txt), s) {
			t.Errorf("LibreOffice's text lacks %q (%+q):\n%s", s, s, txt)
		}
	}
}
