package chart

import (
	"math"
	"slices"
	"testing"
)

func TestNiceScale(t *testing.T) {
	tests := []struct {
		name         string
		min, max     float64
		intervals    int
		lo, hi, step float64
	}{
		{"revenue", 0, 4250000, 6, 0, 5000000, 1000000},
		{"latency", 0, 452, 5, 0, 500, 100},
		{"percent", 0, 100, 5, 0, 100, 20},
		{"negative", -15, 22, 6, -20, 30, 10},
		{"fractions", 0.0012, 0.0031, 8, 0.001, 0.0035, 0.0005},
		{"flat", 5, 5, 5, 4.5, 5.5, 0.25},
		{"all zero", 0, 0, 5, -1, 1, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := niceScale(tt.min, tt.max, tt.intervals)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !near(s.lo, tt.lo) || !near(s.hi, tt.hi) || !near(s.step, tt.step) {
				t.Errorf("niceScale(%v, %v, %d) = [%v, %v] step %v, want [%v, %v] step %v",
					tt.min, tt.max, tt.intervals, s.lo, s.hi, s.step, tt.lo, tt.hi, tt.step)
			}
			if len(s.ticks)-1 > tt.intervals {
				t.Errorf("%d intervals, at most %d wanted", len(s.ticks)-1, tt.intervals)
			}
			if s.ticks[0] > tt.min || s.ticks[len(s.ticks)-1] < tt.max {
				t.Errorf("ticks %v do not cover [%v, %v]", s.ticks, tt.min, tt.max)
			}
		})
	}
}

func TestNiceScaleStaysFinite(t *testing.T) {
	for _, r := range [][2]float64{{-1e100, 1e100}, {1e100, 1e100}, {-1e102, 1e102}, {5e-324, 0}, {0, 1e-300}, {1e-250, 1e-250}} {
		s := niceScale(r[0], r[1], 6)
		if len(s.ticks) < 2 || !(s.hi > s.lo) || math.IsInf(s.hi-s.lo, 0) {
			t.Errorf("niceScale(%v, %v) = %+v, want a finite, non-empty range", r[0], r[1], s)
		}
	}
}

func TestTickLabels(t *testing.T) {
	tests := []struct {
		name     string
		format   numberFormat
		min, max float64
		want     []string
	}{
		{"thousands", numberFormat{kind: FormatNumber}, 0, 400000, []string{"0", "100,000", "200,000", "300,000", "400,000"}},
		{"millions", numberFormat{kind: FormatCurrency, currency: "USD"}, 0, 4250000, []string{"$0", "$1M", "$2M", "$3M", "$4M", "$5M"}},
		{"quarter millions", numberFormat{kind: FormatNumber}, 0, 1000000, []string{"0", "0.25M", "0.50M", "0.75M", "1.00M"}},
		{"percent", numberFormat{kind: FormatPercent}, -10, 20, []string{"−10%", "0%", "10%", "20%"}},
		{"euro", numberFormat{kind: FormatCurrency, currency: "EUR"}, -2000, 2000, []string{"−€2,000", "€0", "€2,000"}},
		{"other currency", numberFormat{kind: FormatCurrency, currency: "CHF"}, 0, 20, []string{"CHF 0", "CHF 10", "CHF 20"}},
		{"decimals", numberFormat{kind: FormatNumber}, 0, 1, []string{"0", "0.25", "0.50", "0.75", "1.00"}},
		{"scientific", numberFormat{kind: FormatNumber}, 0, 2e20, []string{"0", "1e20", "2e20"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := niceScale(tt.min, tt.max, len(tt.want)-1)
			got := tt.format.ticks(s)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ticks(%v) = %q, want %q", s.ticks, got, tt.want)
			}
		})
	}
}

func TestValueLabels(t *testing.T) {
	tests := []struct {
		format numberFormat
		v      float64
		want   string
	}{
		{numberFormat{kind: FormatNumber}, 48210, "48,210"},
		{numberFormat{kind: FormatNumber}, 1234.5, "1,234.5"},
		{numberFormat{kind: FormatNumber}, -0.004, "−0.004"},
		{numberFormat{kind: FormatCurrency, currency: "GBP"}, 1234.5, "£1,234.50"},
		{numberFormat{kind: FormatCurrency, currency: "JPY"}, 100, "¥100"},
		{numberFormat{kind: FormatPercent}, 12.5, "12.5%"},
		{numberFormat{kind: FormatCurrency, currency: "USD"}, 0.5, "$0.50"},
		{numberFormat{kind: FormatCurrency, currency: "USD"}, 0.125, "$0.125"},
		{numberFormat{kind: FormatNumber}, 1.5e300, "1.5e300"},
	}
	for _, tt := range tests {
		if got := tt.format.value(tt.v); got != tt.want {
			t.Errorf("value(%v) as %s = %q, want %q", tt.v, tt.format.kind, got, tt.want)
		}
	}
}

func TestPercentLabel(t *testing.T) {
	for share, want := range map[float64]string{0.47: "47%", 0.091: "9.1%", 1: "100%", 0.0004: "0.0%"} {
		if got := percentLabel(share); got != want {
			t.Errorf("percentLabel(%v) = %q, want %q", share, got, want)
		}
	}
}
