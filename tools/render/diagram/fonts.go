package diagram

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// fontKind selects one of the Go fonts (tools/render/fonts). They ship
// with the binary, so a diagram looks the same on every machine.
type fontKind int

const (
	fontRegular fontKind = iota
	fontBold
	fontItalic
	fontBoldItalic
	fontMono
	fontMonoBold
	numFontKinds
)

// Text style flags of the xdot "t" operation.
const (
	fontCharBold      = 1
	fontCharItalic    = 2
	fontCharUnderline = 4
	fontCharStrike    = 32
)

var (
	fontsOnce sync.Once
	loaded    [numFontKinds]*opentype.Font
	fontsErr  error
)

func loadFonts() error {
	fontsOnce.Do(func() {
		for k, face := range [numFontKinds]fonts.Face{
			fontRegular:    fonts.GoRegular,
			fontBold:       fonts.GoBold,
			fontItalic:     fonts.GoItalic,
			fontBoldItalic: fonts.GoBoldItalic,
			fontMono:       fonts.GoMono,
			fontMonoBold:   fonts.GoMonoBold,
		} {
			if loaded[k], fontsErr = face.Font(); fontsErr != nil {
				return
			}
		}
	})
	return fontsErr
}

// kindFor maps a Graphviz font name and text style flags to a Go font.
// Graphviz measured the text with its estimate for the named family; the
// painter narrows any text that comes out wider, so that it stays inside
// its box whatever the family.
func kindFor(face string, flags int) fontKind {
	name := strings.ToLower(face)
	bold := flags&fontCharBold != 0 || strings.Contains(name, "bold")
	italic := flags&fontCharItalic != 0 || strings.Contains(name, "italic") || strings.Contains(name, "oblique")
	if strings.Contains(name, "mono") || strings.Contains(name, "courier") || strings.Contains(name, "consol") {
		if bold {
			return fontMonoBold
		}
		return fontMono
	}
	switch {
	case bold && italic:
		return fontBoldItalic
	case bold:
		return fontBold
	case italic:
		return fontItalic
	}
	return fontRegular
}

// faceCache holds the faces of one rendering. opentype faces keep
// per-face buffers and are not safe for concurrent use, so each
// rendering has its own.
type faceCache struct {
	faces map[faceKey]font.Face
}

type faceKey struct {
	kind fontKind
	// size in quarter pixels, so that sizes that differ by rounding
	// noise share a face.
	quarterPx int
}

func (c *faceCache) face(kind fontKind, px float64) (font.Face, error) {
	k := faceKey{kind, int(math.Round(px * 4))}
	if f, ok := c.faces[k]; ok {
		return f, nil
	}
	f, err := fonts.NewChainFace(loaded[kind], &opentype.FaceOptions{
		Size:    float64(k.quarterPx) / 4,
		DPI:     72,
		Hinting: font.HintingNone,
	})
	if err != nil {
		return nil, fmt.Errorf("creating font face: %w", err)
	}
	if c.faces == nil {
		c.faces = make(map[faceKey]font.Face)
	}
	c.faces[k] = f
	return f, nil
}
