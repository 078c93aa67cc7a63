package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/tools/render"
)

// Parse decodes a chart spec strictly and checks it: unknown fields,
// values that do not match the labels, non-finite numbers and specs over
// the limits are refused. Every error is a *render.SourceError whose
// message tells the model what to change.
func Parse(data []byte) (Spec, error) {
	var s Spec
	if len(data) > MaxSpecBytes {
		return s, render.Errorf("chart spec is %d bytes; the limit is %d", len(data), MaxSpecBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Spec{}, render.Errorf("chart spec must be one JSON object with nothing after it")
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// Validate checks a spec as Parse does, for specs built in code. Its
// errors are *render.SourceError.
func (s *Spec) Validate() error {
	switch s.Type {
	case TypeBar, TypeLine, TypeArea, TypePie, TypeScatter:
	case "":
		return render.Errorf("chart spec needs a type: one of %s", typeList)
	default:
		return render.Errorf("chart type %q is not one of %s", s.Type, typeList)
	}
	if err := checkEnum("theme", s.Theme, render.ThemeLight, render.ThemeDark); err != nil {
		return err
	}
	if err := checkEnum("aspect", s.Aspect, render.AspectLandscape, render.AspectPortrait, render.AspectSquare); err != nil {
		return err
	}
	if err := checkEnum("y_format", s.YFormat, FormatNumber, FormatPercent, FormatCurrency); err != nil {
		return err
	}
	if err := checkEnum("x_format", s.XFormat, FormatNumber, FormatPercent, FormatCurrency); err != nil {
		return err
	}
	if s.XFormat != "" && s.Type != TypeScatter {
		return render.Errorf("x_format applies only to scatter charts, whose x axis holds numbers; remove it")
	}
	if s.Currency != "" && !isCurrencyCode(s.Currency) {
		return render.Errorf("currency %q is not an ISO 4217 code such as USD, EUR or JPY", s.Currency)
	}
	if s.Stacked && s.Type != TypeBar && s.Type != TypeArea {
		return render.Errorf("stacked applies only to bar and area charts, not %s", s.Type)
	}
	if err := checkText("x_label", s.XLabel, MaxAxisRunes); err != nil {
		return err
	}
	if err := checkText("y_label", s.YLabel, MaxAxisRunes); err != nil {
		return err
	}

	switch n := len(s.Series); {
	case n == 0:
		return render.Errorf("chart spec needs at least one series")
	case n > MaxSeries:
		return render.Errorf("chart has %d series; the limit is %d", n, MaxSeries)
	case s.Type == TypePie && n != 1:
		return render.Errorf("a pie chart takes exactly one series, got %d; use a bar chart to compare series", n)
	}
	for i, se := range s.Series {
		if err := checkText(fmt.Sprintf("series[%d].name", i), se.Name, MaxLabelRunes); err != nil {
			return err
		}
	}
	if s.Type == TypeScatter {
		return s.validatePoints()
	}
	return s.validateValues()
}

// validateValues checks the labels and values of a categorical chart.
func (s *Spec) validateValues() error {
	switch n := len(s.Labels); {
	case n == 0:
		return render.Errorf("a %s chart needs labels, one per category", s.Type)
	case n > MaxLabels:
		return render.Errorf("chart has %d labels; the limit is %d", n, MaxLabels)
	}
	for i, l := range s.Labels {
		if err := checkText(fmt.Sprintf("labels[%d]", i), l, MaxLabelRunes); err != nil {
			return err
		}
	}
	for i, se := range s.Series {
		if len(se.Points) > 0 {
			return render.Errorf("series[%d] has points, which only scatter charts use; give values, one per label", i)
		}
		if len(se.Values) != len(s.Labels) {
			return render.Errorf("series[%d] has %d values for %d labels; give exactly one value per label", i, len(se.Values), len(s.Labels))
		}
		for j, v := range se.Values {
			if !inRange(v) {
				return render.Errorf("series[%d].values[%d] is %v; values must lie within ±1e100", i, j, v)
			}
			if s.Type == TypePie && v < 0 {
				return render.Errorf("series[%d].values[%d] is %v; pie slices cannot be negative", i, j, v)
			}
		}
	}
	if s.Type == TypePie {
		sum := 0.0
		for _, v := range s.Series[0].Values {
			sum += v
		}
		if sum <= 0 {
			return render.Errorf("pie values must add up to a positive finite total")
		}
	}
	return nil
}

// validatePoints checks the points of a scatter chart.
func (s *Spec) validatePoints() error {
	if len(s.Labels) > 0 {
		return render.Errorf("scatter charts take no labels: each series gives [x, y] points; remove labels or use a line chart")
	}
	total := 0
	for i, se := range s.Series {
		if len(se.Values) > 0 {
			return render.Errorf("series[%d] has values, but scatter series give points as [x, y] pairs", i)
		}
		if len(se.Points) == 0 {
			return render.Errorf("series[%d] has no points; a scatter series gives [x, y] pairs", i)
		}
		total += len(se.Points)
		if total > MaxPoints {
			return render.Errorf("chart has more than %d points; the limit is %d", MaxPoints, MaxPoints)
		}
		for j, p := range se.Points {
			if len(p) != 2 {
				return render.Errorf("series[%d].points[%d] has %d numbers; a point is an [x, y] pair", i, j, len(p))
			}
			for _, v := range p {
				if !inRange(v) {
					return render.Errorf("series[%d].points[%d] holds %v; values must lie within ±1e100", i, j, v)
				}
			}
		}
	}
	return nil
}

func inRange(v float64) bool { return math.Abs(v) <= MaxMagnitude } // false for NaN too

var typeList = strings.Join([]string{TypeBar, TypeLine, TypeArea, TypePie, TypeScatter}, ", ")

func checkEnum(field, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return render.Errorf("%s %q is not one of %s", field, v, strings.Join(allowed, ", "))
}

func checkText(field, v string, max int) error {
	if !utf8.ValidString(v) {
		return render.Errorf("%s is not valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return render.Errorf("%s is %d characters long; the limit is %d", field, n, max)
	}
	return nil
}

func isCurrencyCode(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

// decodeError turns an encoding/json error into a message that names the
// offending field in the spec's own terms rather than Go's.
func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return render.Errorf("chart spec is not valid JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return render.Errorf("chart spec must be a JSON object, not %s", typ.Value)
		}
		return render.Errorf("spec field %s must be %s, not %s", field, kindName(typ.Type), typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return render.Errorf("chart spec is empty or cut short")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return render.Errorf("chart spec has no field %s; known fields are type, x_label, y_label, labels, series (name, values, points), stacked, theme, aspect, y_format, x_format, currency", name)
	}
	return render.Errorf("chart spec could not be read: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float64:
		return "a finite number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct:
		return "an object"
	}
	return t.String()
}
