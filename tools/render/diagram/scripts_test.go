package diagram

import (
	"context"
	"image"
	"image/color"
	"os"
	"strings"
	"testing"

	"git.sr.ht/~sbinet/gg"
)

// TestLabelsInEveryScript checks that labels in scripts the Go fonts
// lack reach the picture through the fallback fonts instead of as "?".
func TestLabelsInEveryScript(t *testing.T) {
	if err := loadFonts(); err != nil {
		t.Fatal(err)
	}
	var p painter
	for _, s := range []string{"東京", "서울", "שלום", "مرحبا", "नमस्ते", "สวัสดี", "Tiếng Việt", "★"} {
		if got := p.printable(s); strings.Contains(got, "?") || got == "" {
			t.Errorf("printable(%q) = %q", s, got)
		}
	}
	out, err := Render(context.Background(), Diagram{Source: `digraph { a [label="東京 office"]; b [label="שלום עולם"]; c [label="مرحبا"]; d [label="नमस्ते ★"]; a -> b -> c -> d }`})
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES"); dir != "" {
		if err := os.WriteFile(dir+"/diagram-scripts.png", out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDevanagariLabelIsShaped draws the conjunct क्ष and checks that its
// ink is about one glyph wide: drawn by character, ka, virama and ssa
// stand side by side and take nearly twice as much.
func TestDevanagariLabelIsShaped(t *testing.T) {
	if err := loadFonts(); err != nil {
		t.Fatal(err)
	}
	ink := func(s string) int {
		dc := gg.NewContext(400, 120)
		dc.SetColor(color.White)
		dc.Clear()
		p := &painter{dc: dc, scale: 1}
		st := newState()
		st.fontSize = 60
		p.text(&st, &op{Op: "T", Pt: [2]float64{20, -90}, Text: s})
		img := dc.Image().(*image.RGBA)
		left, right := img.Bounds().Dx(), -1
		for y := range img.Bounds().Dy() {
			for x := range img.Bounds().Dx() {
				if c := img.RGBAAt(x, y); c.R < 128 {
					left, right = min(left, x), max(right, x)
				}
			}
		}
		return right - left + 1
	}
	conjunct, ka := ink("क्ष"), ink("क")
	if ka <= 0 || conjunct*2 > ka*3 {
		t.Errorf("क्ष is %d px of ink, क alone %d: the conjunct was not formed", conjunct, ka)
	}
}
