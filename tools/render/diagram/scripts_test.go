package diagram

import (
	"context"
	"os"
	"strings"
	"testing"
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
