package diagram

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
)

// samples are diagrams written as a model would write them, their DOT in
// testdata/<name>.dot: a flowchart with decisions, a clustered
// architecture, a 50-node dependency graph (the size the speed target is
// set for) and a dark one. They feed TestWriteSamples, the rendering
// tests and the benchmarks. testdata also holds previews of two of them.
var samples = []struct {
	name, theme, aspect string
}{
	{"flowchart", "", render.AspectPortrait},
	{"architecture", "", ""},
	{"fifty-nodes", "", ""},
	{"dark", render.ThemeDark, ""},
}

func sample(t testing.TB, name string) Diagram {
	t.Helper()
	for _, s := range samples {
		if s.name == name {
			src, err := os.ReadFile(filepath.Join("testdata", name+".dot"))
			if err != nil {
				t.Fatal(err)
			}
			return Diagram{Source: string(src), Language: LanguageDOT, Theme: s.theme, Aspect: s.aspect}
		}
	}
	t.Fatalf("no sample %q", name)
	return Diagram{}
}

// TestWriteSamples writes every sample as PNG to the directory named by
// SWITCHYARD_RENDER_SAMPLES, for checking by eye.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES")
	if dir == "" {
		t.Skip("SWITCHYARD_RENDER_SAMPLES is not set")
	}
	for _, s := range samples {
		png, err := Render(context.Background(), sample(t, s.name))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "diagram-"+s.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
