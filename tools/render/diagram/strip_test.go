package diagram

import (
	"bytes"
	"context"
	"image/png"
	"testing"
)

// A flowchart of a dozen steps asked for in landscape is not drawn as a
// strip many times wider than high, which a page would shrink to
// unreadable text: it turns top to bottom.
func TestLongFlowchartIsNotAStrip(t *testing.T) {
	src := `digraph {
		start -> intake -> triage -> review -> approve -> schedule -> build -> test -> release -> monitor -> report -> close -> archive
		review -> rework -> review
		test -> fix -> test
	}`
	out, err := Render(context.Background(), Diagram{Source: src, Aspect: "landscape"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	r := float64(cfg.Width) / float64(cfg.Height)
	if r > 3 {
		t.Errorf("%d×%d px (%.1f:1), want no wider than 3:1", cfg.Width, cfg.Height, r)
	}
}
