package chart

import (
	"math"
	"strconv"
	"strings"
)

// scale is a value axis: its range and the ticks on it.
type scale struct {
	lo, hi float64
	step   float64
	ticks  []float64
}

// niceScale returns a range that covers [min, max] and ends on round
// ticks (1, 2, 2.5 or 5 times a power of ten): the finest such ticks that
// make at most maxIntervals intervals, so the data fills the axis.
func niceScale(min, max float64, maxIntervals int) scale {
	if min > max {
		min, max = max, min
	}
	if max-min < 1e-200 {
		// Flat data: show it mid-axis, with room on both sides.
		pad := math.Max(math.Abs(min)*0.1, 1e-200)
		if math.Abs(min) < 1e-200 {
			pad = 1
		}
		min, max = min-pad, max+pad
	}
	ends := scale{lo: min, hi: max, step: math.Inf(1), ticks: []float64{min, max}}
	span := max - min
	if math.IsInf(span, 0) || math.IsNaN(span) {
		return ends // cannot happen within MaxMagnitude; kept as a guard
	}
	maxIntervals = maxInt(maxIntervals, 2)
	step := niceStep(span / float64(maxIntervals))
	var lo, hi float64
	var n int
	for try := 0; try < 4; try++ {
		lo = math.Floor(min/step) * step
		hi = math.Ceil(max/step) * step
		n = int(math.Round((hi - lo) / step))
		if n <= maxIntervals {
			break
		}
		step = niceStep(step * 1.01)
	}
	if n < 1 || n > 40 || lo == hi {
		// Steps below the precision of the values: fall back to the ends.
		return ends
	}
	s := scale{lo: lo, hi: hi, step: step}
	for i := 0; i <= n; i++ {
		v := lo + float64(i)*step
		if math.Abs(v) < step*1e-9 {
			v = 0 // no "-0" from rounding
		}
		s.ticks = append(s.ticks, v)
	}
	return s
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func niceStep(raw float64) float64 {
	exp := math.Floor(math.Log10(raw))
	pow := math.Pow(10, exp)
	f := raw / pow
	switch {
	case f <= 1:
		f = 1
	case f <= 2:
		f = 2
	case f <= 2.5:
		f = 2.5
	case f <= 5:
		f = 5
	default:
		f = 10
	}
	return f * pow
}

// numberFormat writes the numbers of one axis or legend.
type numberFormat struct {
	kind     string // FormatNumber, FormatPercent or FormatCurrency
	currency string // ISO code, for FormatCurrency
}

// compact units for large axis values: 1,500,000 reads better as 1.5M.
var units = []struct {
	size   float64
	suffix string
}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}}

// ticks returns the labels of a scale's ticks: all with the same number
// of decimals, enough to tell neighbours apart, and large values in
// compact units.
func (f numberFormat) ticks(s scale) []string {
	maxAbs := 0.0
	for _, t := range s.ticks {
		maxAbs = math.Max(maxAbs, math.Abs(t))
	}
	if maxAbs >= 1e15 || maxAbs > 0 && maxAbs < 1e-4 {
		// Beyond the compact units and the decimals a reader counts:
		// scientific notation, with three significant digits.
		out := make([]string, len(s.ticks))
		for i, t := range s.ticks {
			out[i] = f.decorate(scientific(t))
		}
		return out
	}
	div, suffix := 1.0, ""
	for _, u := range units {
		if maxAbs >= u.size && f.kind != FormatPercent {
			div, suffix = u.size, u.suffix
			break
		}
	}
	decimals := 0
	if st := s.step / div; !math.IsInf(st, 0) && st > 0 && st < 1 {
		decimals = int(math.Ceil(-math.Log10(st) - 1e-9))
		if decimals > 10 {
			decimals = 10
		}
		// A step of 2.5 units needs one decimal more than its power of ten.
		if r := st * math.Pow(10, float64(decimals)); math.Abs(r-math.Round(r)) > 1e-6 {
			decimals++
		}
	} else if st := s.step / div; math.Abs(st-math.Round(st)) > 1e-9 && !math.IsInf(st, 0) {
		decimals = 1
	}
	out := make([]string, len(s.ticks))
	for i, t := range s.ticks {
		if t == 0 {
			out[i] = f.decorate("0")
			continue
		}
		out[i] = f.decorate(group(t/div, decimals) + suffix)
	}
	return out
}

// value writes one exact value, as in a pie legend: thousands grouped,
// no decimals for whole numbers, otherwise two (currency) or up to two,
// and enough for three significant digits below one.
func (f numberFormat) value(v float64) string {
	a := math.Abs(v)
	if a >= 1e15 || a > 0 && a < 1e-4 {
		return f.decorate(scientific(v))
	}
	decimals := 0
	if v != math.Trunc(v) {
		decimals = 2
		if a < 1 {
			decimals = int(math.Ceil(-math.Log10(a))) + 2
		}
	}
	s := group(v, decimals)
	if decimals > 0 {
		keep := strings.Index(s, ".") // trim zeros, keeping cents for currency
		if f.kind == FormatCurrency {
			keep += 2
		}
		for len(s)-1 > keep && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		s = strings.TrimSuffix(s, ".")
	}
	return f.decorate(s)
}

// decorate adds the unit of the format to a written number, keeping a
// typographic minus in front: −$1,200, −4.5%.
func (f numberFormat) decorate(num string) string {
	neg := strings.HasPrefix(num, "−")
	num = strings.TrimPrefix(num, "−")
	switch f.kind {
	case FormatPercent:
		num += "%"
	case FormatCurrency:
		num = currencySymbol(f.currency) + num
	}
	if neg {
		num = "−" + num
	}
	return num
}

func currencySymbol(code string) string {
	switch code {
	case "", "USD":
		return "$"
	case "EUR":
		return "€"
	case "GBP":
		return "£"
	case "JPY", "CNY":
		return "¥"
	}
	return code + " "
}

// group writes v with the given decimals and a comma between groups of
// three digits, and U+2212 as the minus sign.
func group(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	if strings.Trim(s, "0.") == "" {
		v = 0 // a value that rounds to zero has no sign
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 {
		b.WriteString("−")
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// scientific writes v as 1.5e300, with U+2212 for minus signs.
func scientific(v float64) string {
	if v == 0 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'g', 3, 64)
	s = strings.Replace(s, "e+", "e", 1)
	return strings.ReplaceAll(s, "-", "−")
}

// percentLabel writes a pie slice's share: one decimal under 10%.
func percentLabel(share float64) string {
	p := share * 100
	if p < 10 {
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

func itoa(i int) string { return strconv.Itoa(i) }
