// Package fonts is where the renderers get their font faces: every face
// any of them draws text with, compiled into the binary so that a
// document or a picture looks the same on every machine, and no face
// that none of them uses, since each face linked is a few hundred
// kilobytes of binary.
//
// The PDF renderer sets text in Go Regular, Bold, Italic, Bold Italic and
// Go Mono; the diagram painter in those and Go Mono Bold; charts in Go
// Regular and Bold, so that a chart in a document is in the document's
// family. Word documents and spreadsheets name their fonts for the
// reader's office program and embed none.
//
// Characters these faces lack (CJK, Hebrew, Arabic, Devanagari, Thai,
// symbols, emoji) are drawn with fonts found on the system at run time,
// not linked: see Fallbacks.
package fonts

import (
	"bytes"
	"compress/zlib"
	_ "embed"
	"fmt"
	"io"
	"sync"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

//go:generate go run gen_mono.go

// Face is one of the compiled-in font faces.
type Face uint8

const (
	GoRegular Face = iota
	GoBold
	GoItalic
	GoBoldItalic
	GoMono
	GoMonoBold
	numFaces
)

// ttfs gives each face's TrueType file. Go Regular, Bold, Italic and Bold
// Italic come from golang.org/x/image/font/gofont as they are: gonum/plot
// links them anyway (its LaTeX text handler parses them when the process
// starts). Go Mono and Go Mono Bold, which only this package uses, are
// compiled in zlib-compressed (gen_mono.go writes them; 0.16 MB for 0.35
// MB) and inflated on first use, once per process, in about 2 ms of CPU
// each.
var ttfs = [numFaces]func() []byte{
	GoRegular:    func() []byte { return goregular.TTF },
	GoBold:       func() []byte { return gobold.TTF },
	GoItalic:     func() []byte { return goitalic.TTF },
	GoBoldItalic: func() []byte { return gobolditalic.TTF },
	GoMono:       sync.OnceValue(func() []byte { return inflate(goMono) }),
	GoMonoBold:   sync.OnceValue(func() []byte { return inflate(goMonoBold) }),
}

var (
	//go:embed Go-Mono.ttf.zlib
	goMono []byte
	//go:embed Go-Mono-Bold.ttf.zlib
	goMonoBold []byte
)

// inflate returns a compressed face inflated, or nil if it cannot, which
// TestFacesMatchGofont rules out for the copies compiled in.
func inflate(compressed []byte) []byte {
	zr, err := zlib.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil
	}
	return b
}

var names = [numFaces]string{
	GoRegular:    "Go Regular",
	GoBold:       "Go Bold",
	GoItalic:     "Go Italic",
	GoBoldItalic: "Go Bold Italic",
	GoMono:       "Go Mono",
	GoMonoBold:   "Go Mono Bold",
}

func (f Face) String() string {
	if f >= numFaces {
		return fmt.Sprintf("fonts.Face(%d)", uint8(f))
	}
	return names[f]
}

// TTF returns the face's TrueType file. The bytes are shared by every
// caller: a consumer that modifies what it is given (fpdf does) needs a
// copy.
func (f Face) TTF() []byte {
	if f >= numFaces {
		return nil
	}
	return ttfs[f]()
}

// parsed holds each face parsed, once per process. An sfnt.Font is
// read-only once parsed and safe for concurrent use, each caller with
// its own sfnt.Buffer.
var parsed = func() (p [numFaces]func() (*sfnt.Font, error)) {
	for f := range numFaces {
		p[f] = sync.OnceValues(func() (*sfnt.Font, error) {
			fnt, err := sfnt.Parse(f.TTF())
			if err != nil {
				return nil, fmt.Errorf("fonts: parsing %s: %w", f, err)
			}
			return fnt, nil
		})
	}
	return p
}()

// Font returns the face parsed (an sfnt.Font is an opentype.Font),
// parsing it on first use.
func (f Face) Font() (*sfnt.Font, error) {
	if f >= numFaces {
		return nil, fmt.Errorf("fonts: no face %d", uint8(f))
	}
	return parsed[f]()
}
