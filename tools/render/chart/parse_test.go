package chart

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

func TestParseRefuses(t *testing.T) {
	manyLabels := func(n int) string {
		ls := make([]string, n)
		vs := make([]string, n)
		for i := range ls {
			ls[i] = fmt.Sprintf("%q", fmt.Sprint(i))
			vs[i] = "1"
		}
		return fmt.Sprintf(`{"type":"bar","labels":[%s],"series":[{"name":"a","values":[%s]}]}`, strings.Join(ls, ","), strings.Join(vs, ","))
	}
	manySeries := `{"type":"bar","labels":["a"],"series":[` + strings.Repeat(`{"name":"s","values":[1]},`, MaxSeries) + `{"name":"s","values":[1]}]}`
	manyPoints := `{"type":"scatter","series":[{"name":"p","points":[` + strings.Repeat(`[1,2],`, MaxPoints) + `[1,2]]}]}`

	tests := []struct {
		name string
		spec string
		want string // part of the message
	}{
		{"not JSON", `{"type":`, "cut short"},
		{"syntax error", `{"type" "bar"}`, "not valid JSON"},
		{"not an object", `[1,2]`, "must be a JSON object"},
		{"trailing data", `{"type":"bar","labels":["a"],"series":[{"name":"a","values":[1]}]} {}`, "nothing after it"},
		{"unknown field", `{"type":"bar","colour":"red","labels":["a"],"series":[{"name":"a","values":[1]}]}`, `no field "colour"`},
		{"unknown series field", `{"type":"bar","labels":["a"],"series":[{"name":"a","data":[1]}]}`, `no field "data"`},
		{"missing type", `{"labels":["a"],"series":[{"name":"a","values":[1]}]}`, "needs a type"},
		{"unknown type", `{"type":"donut","labels":["a"],"series":[{"name":"a","values":[1]}]}`, `"donut" is not one of bar, line, area, pie, scatter`},
		{"string value", `{"type":"bar","labels":["a"],"series":[{"name":"a","values":["1"]}]}`, "series.values must be a finite number"},
		{"number too large", `{"type":"bar","labels":["a"],"series":[{"name":"a","values":[1e400]}]}`, "must be a finite number"},
		{"no series", `{"type":"bar","labels":["a"],"series":[]}`, "at least one series"},
		{"too many series", manySeries, "limit is 50"},
		{"no labels", `{"type":"line","series":[{"name":"a","values":[1]}]}`, "needs labels"},
		{"too many labels", manyLabels(MaxLabels + 1), "limit is 1000"},
		{"values do not match labels", `{"type":"bar","labels":["a","b"],"series":[{"name":"a","values":[1]}]}`, "1 values for 2 labels"},
		{"points on a bar chart", `{"type":"bar","labels":["a"],"series":[{"name":"a","values":[1],"points":[[1,2]]}]}`, "only scatter charts use"},
		{"label too long", `{"type":"bar","labels":["` + strings.Repeat("x", MaxLabelRunes+1) + `"],"series":[{"name":"a","values":[1]}]}`, "labels[0] is 201 characters"},
		{"name too long", `{"type":"bar","labels":["a"],"series":[{"name":"` + strings.Repeat("é", MaxLabelRunes+1) + `","values":[1]}]}`, "series[0].name"},
		{"axis title too long", `{"type":"bar","y_label":"` + strings.Repeat("y", MaxAxisRunes+1) + `","labels":["a"],"series":[{"name":"a","values":[1]}]}`, "y_label"},
		{"pie with two series", `{"type":"pie","labels":["a"],"series":[{"name":"a","values":[1]},{"name":"b","values":[1]}]}`, "exactly one series"},
		{"negative pie slice", `{"type":"pie","labels":["a","b"],"series":[{"name":"a","values":[1,-1]}]}`, "cannot be negative"},
		{"empty pie", `{"type":"pie","labels":["a"],"series":[{"name":"a","values":[0]}]}`, "positive finite total"},
		{"scatter with labels", `{"type":"scatter","labels":["a"],"series":[{"name":"a","points":[[1,2]]}]}`, "take no labels"},
		{"scatter with values", `{"type":"scatter","series":[{"name":"a","values":[1]}]}`, "give points"},
		{"scatter without points", `{"type":"scatter","series":[{"name":"a"}]}`, "has no points"},
		{"point of three", `{"type":"scatter","series":[{"name":"a","points":[[1,2,3]]}]}`, "points[0] has 3 numbers"},
		{"too many points", manyPoints, "limit is 10000"},
		{"stacked line", `{"type":"line","stacked":true,"labels":["a"],"series":[{"name":"a","values":[1]}]}`, "stacked applies only to bar and area"},
		{"value too large", `{"type":"bar","labels":["a"],"series":[{"name":"a","values":[1e101]}]}`, "within ±1e100"},
		{"point too large", `{"type":"scatter","series":[{"name":"a","points":[[1,-1e101]]}]}`, "within ±1e100"},
		{"unknown theme", `{"type":"bar","theme":"blue","labels":["a"],"series":[{"name":"a","values":[1]}]}`, `theme "blue"`},
		{"unknown aspect", `{"type":"bar","aspect":"wide","labels":["a"],"series":[{"name":"a","values":[1]}]}`, `aspect "wide"`},
		{"unknown format", `{"type":"bar","y_format":"money","labels":["a"],"series":[{"name":"a","values":[1]}]}`, `y_format "money"`},
		{"x_format off scatter", `{"type":"bar","x_format":"percent","labels":["a"],"series":[{"name":"a","values":[1]}]}`, "only to scatter"},
		{"bad currency", `{"type":"bar","currency":"dollars","labels":["a"],"series":[{"name":"a","values":[1]}]}`, "ISO 4217"},
		{"too large", `{"type":"bar","x_label":"` + strings.Repeat(" ", MaxSpecBytes) + `"}`, "the limit is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.spec))
			rendertest.SourceError(t, err, tt.want)
		})
	}
}

func TestParseAcceptsSamplesAndRoundTrips(t *testing.T) {
	for i, sm := range samples {
		t.Run(sm.name, func(t *testing.T) {
			s := sampleSpec(t, i)
			// The spec is the artifact's source: written back out and read
			// again, it must be the same chart.
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(data)
			if err != nil {
				t.Fatalf("re-parsing %s: %v", data, err)
			}
			if diff := cmp.Diff(s, again); diff != "" {
				t.Errorf("round trip changed the spec (-first +second):\n%s", diff)
			}
		})
	}
}

func TestParseKeepsTheOriginalContract(t *testing.T) {
	// A spec using only the fields create_chart has always had.
	s, err := Parse([]byte(`{"type":"line","x_label":"Year","y_label":"Sales",
		"labels":["2023","2024"],"series":[{"name":"A","values":[1,2]},{"name":"B","values":[3,4]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Type: TypeLine, XLabel: "Year", YLabel: "Sales", Labels: []string{"2023", "2024"},
		Series: []Series{{Name: "A", Values: []float64{1, 2}}, {Name: "B", Values: []float64{3, 4}}}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}
