package xlsx

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// evalFunction computes a function from its evaluated arguments.
type evalFunction func(e *evaluator, args []value) (value, error)

// evalFunctions are the functions the evaluator computes (IF and
// IFERROR are read by the parser). The rest are left to the formula
// library.
var evalFunctions map[string]evalFunction

func init() {
	evalFunctions = map[string]evalFunction{
		"SUM":         aggregate(func(xs []float64) value { return number(sum(xs)) }),
		"AVERAGE":     aggregate(average),
		"MIN":         aggregate(func(xs []float64) value { return extreme(xs, -1) }),
		"MAX":         aggregate(func(xs []float64) value { return extreme(xs, 1) }),
		"PRODUCT":     aggregate(product),
		"COUNT":       count,
		"COUNTA":      countA,
		"ROUND":       rounding(math.Round),
		"ROUNDUP":     rounding(func(x float64) float64 { return math.Copysign(math.Ceil(math.Abs(x)), x) }),
		"ROUNDDOWN":   rounding(math.Trunc),
		"INT":         unaryMath(math.Floor),
		"ABS":         unaryMath(math.Abs),
		"SQRT":        sqrt,
		"MOD":         mod,
		"POWER":       power,
		"AND":         logical(true),
		"OR":          logical(false),
		"NOT":         not,
		"SUMIF":       conditional("SUMIF"),
		"COUNTIF":     conditional("COUNTIF"),
		"AVERAGEIF":   conditional("AVERAGEIF"),
		"SUMPRODUCT":  sumProduct,
		"CONCATENATE": concat,
		"CONCAT":      concat,
		"LEN":         textFunc(func(s string) value { return number(float64(utf8.RuneCountInString(s))) }),
		"UPPER":       textFunc(func(s string) value { return value{kind: valStr, str: strings.ToUpper(s)} }),
		"LOWER":       textFunc(func(s string) value { return value{kind: valStr, str: strings.ToLower(s)} }),
		"TRIM":        textFunc(func(s string) value { return value{kind: valStr, str: strings.Join(strings.Fields(s), " ")} }),
	}
}

// each calls f with every value the arguments hold, a range's cells one
// by one, and tells f whether the value came from a range (where Excel's
// aggregates skip text and booleans).
func (e *evaluator) each(args []value, f func(v value, inRange bool) bool) error {
	for _, a := range args {
		if a.kind != valRange {
			if !f(a, false) {
				return nil
			}
			continue
		}
		r := a.rng
		grid := e.grids[a.sheet]
		for row := r.row1; row <= r.row2 && row < len(grid); row++ {
			for col := r.col1; col <= r.col2 && col < len(grid[row]); col++ {
				v, err := e.cellValue(a.sheet, row, col)
				if err != nil {
					return err
				}
				if !f(v, true) {
					return nil
				}
			}
		}
	}
	return nil
}

// numbers collects the numbers of the arguments as SUM reads them:
// numbers in ranges, and direct arguments coerced; the first error wins.
func (e *evaluator) numbers(args []value) ([]float64, value, error) {
	var xs []float64
	var bad value
	err := e.each(args, func(v value, inRange bool) bool {
		switch {
		case v.kind == valErr:
			bad = v
			return false
		case v.kind == valNum:
			xs = append(xs, v.num)
		case !inRange && v.kind != valEmpty:
			n, _ := e.toNumber(v)
			if n.kind == valErr {
				bad = n
				return false
			}
			xs = append(xs, n.num)
		}
		return true
	})
	return xs, bad, err
}

func aggregate(f func([]float64) value) evalFunction {
	return func(e *evaluator, args []value) (value, error) {
		if len(args) == 0 {
			return value{}, errUnknown
		}
		xs, bad, err := e.numbers(args)
		if err != nil {
			return value{}, err
		}
		if bad.kind == valErr {
			return bad, nil
		}
		return f(xs), nil
	}
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func average(xs []float64) value {
	if len(xs) == 0 {
		return errDiv0
	}
	return number(sum(xs) / float64(len(xs)))
}

func product(xs []float64) value {
	if len(xs) == 0 {
		return number(0)
	}
	p := 1.0
	for _, x := range xs {
		p *= x
	}
	return number(p)
}

func extreme(xs []float64, sign float64) value {
	if len(xs) == 0 {
		return number(0)
	}
	m := xs[0]
	for _, x := range xs[1:] {
		if (x-m)*sign > 0 {
			m = x
		}
	}
	return number(m)
}

func count(e *evaluator, args []value) (value, error) {
	n := 0
	err := e.each(args, func(v value, inRange bool) bool {
		switch {
		case v.kind == valNum:
			n++
		case !inRange && v.kind == valBool:
			n++
		case !inRange && v.kind == valStr:
			if _, err := strconv.ParseFloat(strings.TrimSpace(v.str), 64); err == nil {
				n++
			}
		}
		return true
	})
	return number(float64(n)), err
}

func countA(e *evaluator, args []value) (value, error) {
	n := 0
	err := e.each(args, func(v value, inRange bool) bool {
		if v.kind != valEmpty || !inRange {
			n++
		}
		return true
	})
	return number(float64(n)), err
}

// scalars evaluates each argument to a number.
func (e *evaluator) scalars(args []value, n int) ([]float64, value, error) {
	if len(args) != n {
		return nil, value{}, errUnknown
	}
	out := make([]float64, n)
	for i, a := range args {
		v, err := e.toNumber(a)
		if err != nil {
			return nil, value{}, err
		}
		if v.kind == valErr {
			return nil, v, nil
		}
		out[i] = v.num
	}
	return out, value{}, nil
}

// rounding is ROUND and its kin: digits may be negative (to tens,
// hundreds). The value is first taken to 15 significant digits, as
// Excel does, so that 2.675 rounds to 2.68 although its float is a hair
// below.
func rounding(round func(float64) float64) evalFunction {
	return func(e *evaluator, args []value) (value, error) {
		xs, bad, err := e.scalars(args, 2)
		if err != nil || bad.kind == valErr {
			return bad, err
		}
		p := math.Pow(10, math.Trunc(xs[1]))
		scaled, _ := strconv.ParseFloat(strconv.FormatFloat(xs[0]*p, 'g', 15, 64), 64)
		return number(round(scaled) / p), nil
	}
}

func unaryMath(f func(float64) float64) evalFunction {
	return func(e *evaluator, args []value) (value, error) {
		xs, bad, err := e.scalars(args, 1)
		if err != nil || bad.kind == valErr {
			return bad, err
		}
		return number(f(xs[0])), nil
	}
}

func sqrt(e *evaluator, args []value) (value, error) {
	xs, bad, err := e.scalars(args, 1)
	if err != nil || bad.kind == valErr {
		return bad, err
	}
	if xs[0] < 0 {
		return errNum, nil
	}
	return number(math.Sqrt(xs[0])), nil
}

// mod has the sign of the divisor, as in Excel.
func mod(e *evaluator, args []value) (value, error) {
	xs, bad, err := e.scalars(args, 2)
	if err != nil || bad.kind == valErr {
		return bad, err
	}
	if xs[1] == 0 {
		return errDiv0, nil
	}
	return number(xs[0] - xs[1]*math.Floor(xs[0]/xs[1])), nil
}

func power(e *evaluator, args []value) (value, error) {
	if len(args) != 2 {
		return value{}, errUnknown
	}
	return e.binary("^", args[0], args[1])
}

// logical is AND (all) and OR (not all): ranges count their numbers and
// booleans only.
func logical(all bool) evalFunction {
	return func(e *evaluator, args []value) (value, error) {
		seen, result := false, all
		var bad value
		err := e.each(args, func(v value, inRange bool) bool {
			if v.kind == valErr {
				bad = v
				return false
			}
			if inRange && v.kind != valNum && v.kind != valBool {
				return true
			}
			b, _ := e.toBool(v)
			if b.kind == valErr {
				bad = b
				return false
			}
			seen = true
			if all && b.num == 0 {
				result = false
			}
			if !all && b.num != 0 {
				result = true
			}
			return true
		})
		switch {
		case err != nil:
			return value{}, err
		case bad.kind == valErr:
			return bad, nil
		case !seen:
			return errValue, nil
		}
		return boolean(result), nil
	}
}

func not(e *evaluator, args []value) (value, error) {
	if len(args) != 1 {
		return value{}, errUnknown
	}
	b, err := e.toBool(args[0])
	if err != nil || b.kind == valErr {
		return b, err
	}
	return boolean(b.num == 0), nil
}

// criterion is a SUMIF/COUNTIF condition: ">5", "<>North", "North", 5.
type criterion struct {
	op  string
	arg value
}

func parseCriterion(v value) (criterion, bool) {
	if v.kind != valStr {
		return criterion{op: "=", arg: v}, true
	}
	s := v.str
	op := "="
	for _, o := range []string{"<>", "<=", ">=", "=", "<", ">"} {
		if rest, ok := strings.CutPrefix(s, o); ok {
			op, s = o, rest
			break
		}
	}
	if strings.ContainsAny(s, "*?~") {
		// Wildcards are left to the formula library.
		return criterion{}, false
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return criterion{op: op, arg: value{kind: valNum, num: f}}, true
	}
	switch strings.ToUpper(s) {
	case "TRUE":
		return criterion{op: op, arg: boolean(true)}, true
	case "FALSE":
		return criterion{op: op, arg: boolean(false)}, true
	}
	return criterion{op: op, arg: value{kind: valStr, str: s}}, true
}

// matches applies the criterion as Excel does: comparisons only between
// values of one type, "=" with an empty text matching empty cells.
func (c criterion) matches(v value) bool {
	if c.arg.kind == valStr && c.arg.str == "" {
		empty := v.kind == valEmpty || v.kind == valStr && v.str == ""
		if c.op == "=" {
			return empty
		}
		if c.op == "<>" {
			return !empty
		}
	}
	if v.kind != c.arg.kind {
		return c.op == "<>"
	}
	d := compareValues(v, c.arg)
	switch c.op {
	case "=":
		return d == 0
	case "<>":
		return d != 0
	case "<":
		return d < 0
	case ">":
		return d > 0
	case "<=":
		return d <= 0
	case ">=":
		return d >= 0
	}
	return false
}

// conditional is SUMIF, COUNTIF and AVERAGEIF over same-shaped ranges.
func conditional(name string) evalFunction {
	return func(e *evaluator, args []value) (value, error) {
		want := 3
		if name == "COUNTIF" {
			want = 2
		}
		if len(args) != want && !(name != "COUNTIF" && len(args) == 2) || args[0].kind != valRange {
			return value{}, errUnknown
		}
		crit, err := e.single(args[1])
		if err != nil {
			return value{}, err
		}
		if crit.kind == valErr {
			return crit, nil
		}
		c, ok := parseCriterion(crit)
		if !ok {
			return value{}, errUnknown
		}
		test := args[0]
		target := test
		if len(args) == 3 {
			if args[2].kind != valRange {
				return value{}, errUnknown
			}
			// Excel sizes the summed range like the tested one, from its
			// top-left cell.
			target = args[2]
			target.rng.row2 = target.rng.row1 + test.rng.row2 - test.rng.row1
			target.rng.col2 = target.rng.col1 + test.rng.col2 - test.rng.col1
		}
		total, n := 0.0, 0
		var bad value
		for r := 0; r <= test.rng.row2-test.rng.row1; r++ {
			for col := 0; col <= test.rng.col2-test.rng.col1; col++ {
				v, err := e.cellValue(test.sheet, test.rng.row1+r, test.rng.col1+col)
				if err != nil {
					return value{}, err
				}
				if !c.matches(v) {
					continue
				}
				if name == "COUNTIF" {
					n++
					continue
				}
				t, err := e.cellValue(target.sheet, target.rng.row1+r, target.rng.col1+col)
				if err != nil {
					return value{}, err
				}
				switch t.kind {
				case valErr:
					if bad.kind != valErr {
						bad = t
					}
				case valNum:
					total += t.num
					n++
				}
			}
		}
		switch {
		case name == "COUNTIF":
			return number(float64(n)), nil
		case bad.kind == valErr:
			return bad, nil
		case name == "AVERAGEIF" && n == 0:
			return errDiv0, nil
		case name == "AVERAGEIF":
			return number(total / float64(n)), nil
		}
		return number(total), nil
	}
}

// sumProduct multiplies same-shaped ranges cell by cell; text and empty
// cells count as 0.
func sumProduct(e *evaluator, args []value) (value, error) {
	if len(args) == 0 {
		return value{}, errUnknown
	}
	first := args[0].rng
	rows, cols := first.row2-first.row1, first.col2-first.col1
	for _, a := range args {
		if a.kind != valRange || a.rng.row2-a.rng.row1 != rows || a.rng.col2-a.rng.col1 != cols {
			return value{}, errUnknown
		}
	}
	total := 0.0
	for r := 0; r <= rows; r++ {
		for c := 0; c <= cols; c++ {
			p := 1.0
			for _, a := range args {
				v, err := e.cellValue(a.sheet, a.rng.row1+r, a.rng.col1+c)
				if err != nil {
					return value{}, err
				}
				switch v.kind {
				case valErr:
					return v, nil
				case valNum:
					p *= v.num
				default:
					p = 0
				}
			}
			total += p
		}
	}
	return number(total), nil
}

func concat(e *evaluator, args []value) (value, error) {
	var b strings.Builder
	var bad value
	err := e.each(args, func(v value, _ bool) bool {
		t, _ := e.toText(v)
		if t.kind == valErr {
			bad = t
			return false
		}
		b.WriteString(t.str)
		return true
	})
	if err != nil || bad.kind == valErr {
		return bad, err
	}
	return value{kind: valStr, str: b.String()}, nil
}

func textFunc(f func(string) value) evalFunction {
	return func(e *evaluator, args []value) (value, error) {
		if len(args) != 1 {
			return value{}, errUnknown
		}
		t, err := e.toText(args[0])
		if err != nil || t.kind == valErr {
			return t, err
		}
		return f(t.str), nil
	}
}
