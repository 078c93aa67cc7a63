package xlsx

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sampleTime is the document time of the samples.
var sampleTime = time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)

// renderSample renders testdata/<name>.json.
func renderSample(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	wb, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	wb.Time = sampleTime
	out, err := Render(context.Background(), wb)
	if err != nil {
		t.Fatalf("Render(%s): %v", name, err)
	}
	return out
}

var update = flag.Bool("update", false, "rewrite testdata/*.xlsx from testdata/*.json")

// TestSamplesMatchTestdata renders each sample source and compares it
// with the workbook kept next to it (and previewed as a PNG), so that any
// change to the output is seen and its preview looked at again. Run with
// -update to accept a change.
func TestSamplesMatchTestdata(t *testing.T) {
	for _, name := range []string{"sales"} {
		got := renderSample(t, name)
		path := filepath.Join("testdata", name+".xlsx")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s renders differently from %s; look at the output, then run with -update", name, path)
		}
	}
}

// TestWriteSamples writes the samples to the directory named by
// SWITCHYARD_RENDER_SAMPLES, for converting and looking at them with
// real applications.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES")
	if dir == "" {
		t.Skip("SWITCHYARD_RENDER_SAMPLES is not set")
	}
	for _, name := range []string{"sales"} {
		out := renderSample(t, name)
		if err := os.WriteFile(filepath.Join(dir, "xlsx-"+name+".xlsx"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
