package fonts

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	gtfont "github.com/go-text/typesetting/font"
	"golang.org/x/image/font/sfnt"
)

// DirEnv names the environment variable that lists font directories
// (separated like PATH) searched before the system's. Every font file in
// them joins the fallback chain ahead of the system fonts, in name order.
const DirEnv = "SWITCHYARD_FONT_DIR"

// systemDirs are where Debian and most Linux systems keep fonts.
var systemDirs = []string{"/usr/share/fonts", "/usr/local/share/fonts"}

// chain names the system fonts tried, in order, for a character the
// bundled faces lack: broad Latin, Greek and Cyrillic (Vietnamese and
// other extended Latin), then one font per script, CJK, symbols and
// emoji, and DejaVu Sans last, which Debian installs nearly everywhere.
// Each entry lists alternatives; the first file found is used. Debian
// packages: fonts-noto-core, fonts-noto-cjk, fonts-droid-fallback,
// fonts-nanum, fonts-symbola, fonts-dejavu-core.
var chain = [][]string{
	{"NotoSans-Regular.ttf"},
	{"NotoSansHebrew-Regular.ttf"},
	{"NotoSansArabic-Regular.ttf", "NotoNaskhArabic-Regular.ttf"},
	{"NotoSansDevanagari-Regular.ttf"},
	{"NotoSansBengali-Regular.ttf"},
	{"NotoSansTamil-Regular.ttf"},
	{"NotoSansThai-Regular.ttf"},
	{"NotoSansArmenian-Regular.ttf"},
	{"NotoSansGeorgian-Regular.ttf"},
	{"NotoSansEthiopic-Regular.ttf"},
	{"NotoSansKhmer-Regular.ttf"},
	// Noto Sans CJK has PostScript outlines, which pictures draw and
	// PDFs cannot embed (TrueType only); Droid Sans Fallback covers the
	// same characters in TrueType for PDFs.
	{"NotoSansCJK-Regular.ttc", "NotoSansCJKsc-Regular.otf"},
	{"DroidSansFallbackFull.ttf", "DroidSansFallback.ttf"},
	{"NanumGothic.ttf"}, // Hangul in TrueType, which Droid Sans Fallback lacks
	{"NotoSansMath-Regular.ttf"},
	{"NotoSansSymbols-Regular.ttf"},
	{"NotoSansSymbols2-Regular.ttf"},
	{"Symbola_hint.ttf", "Symbola.ttf"},
	{"DejaVuSans.ttf"},
}

// Fallback is a font found on the system (or in a configured directory)
// that draws what the bundled faces do not. It is loaded on first use.
type Fallback struct {
	Name string // file name without extension
	Path string
	// TrueType is set when the font has TrueType outlines in a file of
	// its own, the only kind a PDF embeds here.
	TrueType bool

	load func() (loaded, error)
	cov  coverage

	// The font as the shaper reads it (Shape), parsed on first use, and
	// its faces, one per concurrent shaping.
	gtOnce sync.Once
	gtFont *gtfont.Font
	faces  sync.Pool
}

// Font returns the parsed font, or nil if it does not parse.
func (f *Fallback) Font() *sfnt.Font {
	l, _ := f.load()
	return l.font
}

// TTF returns the font file, shared by every caller: a consumer that
// modifies what it is given needs a copy.
func (f *Fallback) TTF() []byte {
	l, _ := f.load()
	return l.ttf
}

// Has reports whether the font has a glyph for r.
func (f *Fallback) Has(r rune) bool {
	return f.cov.has(r, func(r rune) bool {
		fnt := f.Font()
		if fnt == nil {
			return false
		}
		var buf sfnt.Buffer
		g, err := fnt.GlyphIndex(&buf, r)
		return err == nil && g != 0
	})
}

// loaded is a fallback font read from its file; ttf is nil for a
// collection, which only pictures draw.
type loaded struct {
	font *sfnt.Font
	ttf  []byte
}

// Fallbacks returns the fallback chain found on this machine, searched
// once per process: the fonts of the configured directories first, then
// the system fonts of the chain that are installed.
func Fallbacks() []*Fallback { return fallbacks() }

var fallbacks = sync.OnceValue(func() []*Fallback {
	return discover(filepath.SplitList(os.Getenv(DirEnv)), systemDirs)
})

// discover builds the chain from the configured directories and the
// system directories.
func discover(configured, system []string) []*Fallback {
	var out []*Fallback
	seen := map[string]bool{}
	add := func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		out = append(out, newFallback(path))
	}
	for _, dir := range configured {
		var paths []string
		walkFonts(dir, func(path string) { paths = append(paths, path) })
		slices.Sort(paths)
		for _, p := range paths {
			add(p)
		}
	}
	byName := map[string]string{}
	for _, dir := range system {
		walkFonts(dir, func(path string) {
			if _, ok := byName[filepath.Base(path)]; !ok {
				byName[filepath.Base(path)] = path
			}
		})
	}
	for _, alts := range chain {
		for _, name := range alts {
			if p, ok := byName[name]; ok {
				add(p)
				break
			}
		}
	}
	return out
}

func walkFonts(dir string, fn func(path string)) {
	if dir == "" {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory hides only its own fonts
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".ttf", ".otf", ".ttc":
			fn(path)
		}
		return nil
	})
}

func newFallback(path string) *Fallback {
	f := &Fallback{
		Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		Path: path,
	}
	f.TrueType = strings.EqualFold(filepath.Ext(path), ".ttf") && hasGlyfTable(path)
	f.load = sync.OnceValues(func() (loaded, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return loaded{}, err
		}
		if bytes.HasPrefix(b, []byte("ttcf")) {
			c, err := sfnt.ParseCollection(b)
			if err != nil {
				return loaded{}, err
			}
			fnt, err := c.Font(0)
			return loaded{font: fnt}, err
		}
		fnt, err := sfnt.Parse(b)
		if err != nil {
			return loaded{}, err
		}
		return loaded{font: fnt, ttf: b}, nil
	})
	return f
}

// hasGlyfTable reads the table directory of a font file and reports
// whether it has TrueType outlines. Only the header is read, so that
// finding the chain does not load every font.
func hasGlyfTable(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	head := make([]byte, 12)
	if _, err := fh.ReadAt(head, 0); err != nil {
		return false
	}
	n := int(binary.BigEndian.Uint16(head[4:6]))
	if n == 0 || n > 100 {
		return false
	}
	dir := make([]byte, 16*n)
	if _, err := fh.ReadAt(dir, 12); err != nil {
		return false
	}
	for i := range n {
		if string(dir[16*i:16*i+4]) == "glyf" {
			return true
		}
	}
	return false
}
