package chart

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// FuzzParse checks that any input either parses into a spec that renders,
// or is refused with a *render.SourceError; and that a parsed spec
// survives being written back out, as the artifact's source is.
func FuzzParse(f *testing.F) {
	for _, sm := range samples {
		f.Add(sm.spec)
	}
	f.Add([]byte(`{"type":"bar","stacked":true,"labels":["a","b"],"series":[{"name":"x","values":[-1,1e300]},{"name":"y","values":[1e-300,-5]}]}`))
	f.Add([]byte(`{"type":"scatter","x_format":"percent","series":[{"name":"x","points":[[0,0],[1e308,-1e308]]}]}`))
	f.Add([]byte(`{"type":"pie","labels":["a","b","c"],"series":[{"name":"","values":[0,0,1]}]}`))
	f.Add([]byte(`{"type":"line","labels":["😀\n","東京"],"series":[{"name":"\u0000","values":[1,2]}]}`))
	f.Add([]byte(`{"type":"line","labels":["a","b"],"series":[{"name":"x","values":[5e-324,0]}]}`))
	f.Add([]byte(`{"type":"line","labels":["a","b"],"series":[{"name":"x","values":[-1e100,-1e100]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			rendertest.SourceError(t, err)
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal parsed spec: %v", err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("parsed spec does not parse again: %v\n%s", err, out)
		}
		png, err := Render(context.Background(), "Fuzz", s)
		if err != nil {
			t.Fatalf("Render of a parsed spec: %v", err)
		}
		if len(png) < 1000 {
			t.Fatalf("PNG of %d bytes", len(png))
		}
	})
}
