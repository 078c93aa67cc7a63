package fonts

import (
	"sync"
	"testing"

	"golang.org/x/image/font/sfnt"
)

// Every face parses and draws Latin text, under the name it is listed by.
func TestFaces(t *testing.T) {
	want := map[Face]string{
		GoRegular:    "Go Regular",
		GoBold:       "Go Bold",
		GoItalic:     "Go Italic",
		GoBoldItalic: "Go Bold Italic",
		GoMono:       "Go Mono",
		GoMonoBold:   "Go Mono Bold",
	}
	if len(want) != int(numFaces) {
		t.Fatalf("the test knows %d faces, the package %d", len(want), numFaces)
	}
	var buf sfnt.Buffer
	for f, name := range want {
		t.Run(name, func(t *testing.T) {
			fnt, err := f.Font()
			if err != nil {
				t.Fatal(err)
			}
			full, err := fnt.Name(&buf, sfnt.NameIDFull)
			if err != nil {
				t.Fatal(err)
			}
			if full != name {
				t.Errorf("%v holds %q", f, full)
			}
			for _, r := range "Ag€é" {
				if i, err := fnt.GlyphIndex(&buf, r); err != nil || i == 0 {
					t.Errorf("%v has no glyph for %q", f, r)
				}
			}
			if len(f.TTF()) < 10_000 {
				t.Errorf("%v: TTF of %d bytes", f, len(f.TTF()))
			}
		})
	}
}

// A face is parsed once, however many renders ask at once.
func TestFontParsedOnce(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]*sfnt.Font, 8)
	for i := range got {
		wg.Go(func() {
			f, err := GoBold.Font()
			if err != nil {
				t.Error(err)
			}
			got[i] = f
		})
	}
	wg.Wait()
	for _, f := range got {
		if f != got[0] || f == nil {
			t.Fatal("concurrent callers got different parses")
		}
	}
}

func TestUnknownFace(t *testing.T) {
	if _, err := numFaces.Font(); err == nil {
		t.Error("a face past the last parsed")
	}
	if numFaces.TTF() != nil {
		t.Error("a face past the last has a file")
	}
}
