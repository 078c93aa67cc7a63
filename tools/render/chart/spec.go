// Package chart renders the chart spec of the create_chart tool to a PNG:
// bar (grouped or stacked), line, area (optionally stacked), scatter and
// pie charts, in a light or dark theme, with a colour-blind-safe palette.
//
// Parse reads and checks a spec the model wrote; Render draws it. Both are
// pure functions of their input: the same spec and title give the same
// bytes.
package chart

// Chart types, the values of Spec.Type.
const (
	TypeBar     = "bar"
	TypeLine    = "line"
	TypeArea    = "area"
	TypePie     = "pie"
	TypeScatter = "scatter"
)

// Value formats, the values of Spec.YFormat and Spec.XFormat.
const (
	FormatNumber   = "number"
	FormatPercent  = "percent"
	FormatCurrency = "currency"
)

// Limits a spec must keep, so that rendering stays bounded in time and
// memory and the picture stays readable.
const (
	MaxSeries     = 50
	MaxLabels     = 1000
	MaxPoints     = 10000 // scatter points across all series
	MaxLabelRunes = 200   // a category label or series name
	MaxAxisRunes  = 200   // x_label, y_label
	MaxSpecBytes  = 2 << 20
	MaxMagnitude  = 1e100 // of any value; keeps sums and spans finite
	maxPieSlices  = 8     // more slices are merged into "Other"
)

// Spec is the chart a model asks for: the spec object of create_chart.
// It is also the artifact's source, so editing it and rendering again
// gives the edited chart.
type Spec struct {
	// Type is the kind of chart: bar, line, area, pie or scatter.
	// Required.
	Type string `json:"type"`

	// XLabel and YLabel title the axes, units included ("Revenue (USD)").
	// Default: no axis title. Pie charts have no axes and ignore them.
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`

	// Labels name the categories of bar, line, area and pie charts, in
	// order along the x axis (or around the pie). Scatter charts have
	// none.
	Labels []string `json:"labels,omitempty"`

	// Series holds the data, 1 to MaxSeries series. A pie chart has
	// exactly one. With more than one series a legend names them.
	Series []Series `json:"series"`

	// Stacked stacks the series of a bar or area chart on each other
	// instead of drawing them side by side (bar) or overlapping (area).
	// Default: false.
	Stacked bool `json:"stacked,omitempty"`

	// Theme is "light" (dark text on white) or "dark" (light text on
	// near-black). Default: light.
	Theme string `json:"theme,omitempty"`

	// Aspect is the shape of the picture: "landscape" (1600×1000 px),
	// "portrait" (1000×1500 px) or "square" (1200×1200 px). Default:
	// landscape.
	Aspect string `json:"aspect,omitempty"`

	// YFormat says how values are written on the value axis and in the
	// pie legend: "number" (1,234.5; millions as 1.2M), "percent" (values
	// are percentages: 12.5 is written 12.5%) or "currency" (with the
	// symbol of Currency). Default: number, or currency when Currency is
	// set.
	YFormat string `json:"y_format,omitempty"`

	// XFormat is YFormat for the x axis of a scatter chart, the only
	// chart whose x axis holds numbers. Default: number.
	XFormat string `json:"x_format,omitempty"`

	// Currency is the ISO 4217 code (USD, EUR, GBP, JPY, ...) of currency
	// values. Default: USD.
	Currency string `json:"currency,omitempty"`
}

// Series is one named run of data.
type Series struct {
	// Name names the series in the legend. Default: "Series N".
	Name string `json:"name"`

	// Values holds one value per label (bar, line, area, pie).
	Values []float64 `json:"values,omitempty"`

	// Points holds [x, y] pairs (scatter).
	Points [][]float64 `json:"points,omitempty"`
}

// categorical reports whether the chart's x axis is the labels.
func (s *Spec) categorical() bool { return s.Type != TypeScatter }

// yFormat is YFormat with its default applied.
func (s *Spec) yFormat() string {
	switch {
	case s.YFormat != "":
		return s.YFormat
	case s.Currency != "":
		return FormatCurrency
	}
	return FormatNumber
}

// seriesName is the name a series shows in the legend.
func seriesName(s Series, i int) string {
	if s.Name != "" {
		return s.Name
	}
	return "Series " + itoa(i+1)
}
