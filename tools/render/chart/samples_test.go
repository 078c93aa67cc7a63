package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is one chart of each kind, as create_chart arguments (title
// and spec) in testdata/<name>.json. Samples feed TestWriteSamples, the
// rendering tests and the benchmark.
type sample struct {
	name, title string
	spec        []byte // the spec object as the model wrote it
}

var samples = func() []sample {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		panic(fmt.Sprintf("no samples in testdata: %v", err))
	}
	var out []sample
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		var args struct {
			Title string          `json:"title"`
			Spec  json.RawMessage `json:"spec"`
		}
		if err := json.Unmarshal(data, &args); err != nil {
			panic(fmt.Sprintf("%s: %v", f, err))
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		out = append(out, sample{name: name, title: args.Title, spec: args.Spec})
	}
	return out
}()

func sampleSpec(t testing.TB, i int) Spec {
	t.Helper()
	s, err := Parse(samples[i].spec)
	if err != nil {
		t.Fatalf("sample %s: %v", samples[i].name, err)
	}
	return s
}

// TestWriteSamples writes every sample chart as chart-<name>.png into the
// directory SWITCHYARD_RENDER_SAMPLES names, for people and scripts to
// look at. Without that variable it does nothing.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES")
	if dir == "" {
		t.Skip("SWITCHYARD_RENDER_SAMPLES is not set")
	}
	for i, sm := range samples {
		png, err := Render(context.Background(), sm.title, sampleSpec(t, i))
		if err != nil {
			t.Fatalf("%s: %v", sm.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "chart-"+sm.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
