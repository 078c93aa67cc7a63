package chart

import (
	"image/color"

	"github.com/switchyardhq/switchyard/tools/render"
)

// theme holds the colours of one look. Text and rule colours are picked
// for contrast against the background (WCAG AA for text).
type theme struct {
	background color.NRGBA
	title      color.NRGBA // chart title
	text       color.NRGBA // axis titles, legend
	muted      color.NRGBA // tick labels, pie legend values
	grid       color.NRGBA // value grid lines
	baseline   color.NRGBA // the zero line of bar and area charts
	other      color.NRGBA // the merged "Other" slice of a pie
	series     []color.NRGBA
}

// The Okabe–Ito palette: eight colours told apart with every common form
// of colour blindness. Its black is replaced by a grey that sits better
// among the others, and the order differs per theme so that the first
// series always has strong contrast with the background.
var (
	okabeBlue      = rgb(0x0072B2)
	okabeOrange    = rgb(0xE69F00)
	okabeGreen     = rgb(0x009E73)
	okabeVermilion = rgb(0xD55E00)
	okabeSky       = rgb(0x56B4E9)
	okabePurple    = rgb(0xCC79A7)
	okabeYellow    = rgb(0xF0E442)
)

var lightTheme = theme{
	background: rgb(0xFFFFFF),
	title:      rgb(0x1F2328),
	text:       rgb(0x3A4049),
	muted:      rgb(0x5F6672),
	grid:       rgb(0xE4E7EB),
	baseline:   rgb(0x8C939D),
	other:      rgb(0xA3A9B1),
	series: []color.NRGBA{
		okabeBlue, okabeOrange, okabeGreen, okabeVermilion,
		okabeSky, okabePurple, okabeYellow, rgb(0x6B7280),
	},
}

var darkTheme = theme{
	background: rgb(0x17191E),
	title:      rgb(0xF0F3F6),
	text:       rgb(0xD0D5DB),
	muted:      rgb(0xA2AAB4),
	grid:       rgb(0x2C3038),
	baseline:   rgb(0x6C737D),
	other:      rgb(0x7A818B),
	series: []color.NRGBA{
		okabeSky, okabeOrange, okabeGreen, okabeVermilion,
		okabeYellow, okabePurple, okabeBlue, rgb(0xB8BEC6),
	},
}

func themeFor(name string) *theme {
	if name == render.ThemeDark {
		return &darkTheme
	}
	return &lightTheme
}

// color returns the colour of series i; past the palette's end colours
// repeat (line charts then vary the dash pattern, see dashes).
func (t *theme) color(i int) color.NRGBA { return t.series[i%len(t.series)] }

func rgb(v uint32) color.NRGBA {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xFF}
}

// withAlpha returns c at opacity a (0 to 1).
func withAlpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(a*255 + 0.5)
	return c
}

// readableOn returns dark or light text, whichever reads better on c.
func readableOn(c color.NRGBA) color.NRGBA {
	// Relative luminance, coarse but enough to pick between two extremes.
	l := 0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)
	if l > 150 {
		return rgb(0x1F2328)
	}
	return rgb(0xFFFFFF)
}

// blend returns the opaque colour of c at opacity a over background bg.
func blend(c, bg color.NRGBA, a float64) color.NRGBA {
	mix := func(x, y uint8) uint8 { return uint8(float64(x)*a + float64(y)*(1-a) + 0.5) }
	return color.NRGBA{R: mix(c.R, bg.R), G: mix(c.G, bg.G), B: mix(c.B, bg.B), A: 0xFF}
}
