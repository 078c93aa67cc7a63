package fonts

import (
	"bytes"
	"sync"
	"testing"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// Every face is golang.org/x/image's Go font of its name, byte for byte,
// the compressed ones included: after an update of that module, go
// generate rewrites them.
func TestFacesMatchGofont(t *testing.T) {
	want := [numFaces][]byte{
		GoRegular:    goregular.TTF,
		GoBold:       gobold.TTF,
		GoItalic:     goitalic.TTF,
		GoBoldItalic: gobolditalic.TTF,
		GoMono:       gomono.TTF,
		GoMonoBold:   gomonobold.TTF,
	}
	for f := range numFaces {
		if !bytes.Equal(f.TTF(), want[f]) {
			t.Errorf("%v: %d bytes differ from gofont's %d: run go generate ./tools/render/fonts", f, len(f.TTF()), len(want[f]))
		}
	}
}

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
