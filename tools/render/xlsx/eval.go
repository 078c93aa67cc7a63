package xlsx

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// The evaluator computes the formulas a model writes into a table
// (arithmetic, comparisons, text joins, references and ranges across
// sheets, and the functions in evalFunctions) directly over the parsed
// cells, which is two orders of magnitude faster than building a scratch
// workbook for the formula library, so that every such formula gets its
// cached value however large the workbook. A formula it cannot read (an
// unknown function, a name, an array) is left to the formula library.

// errUnknown means the evaluator cannot compute a formula, as opposed to
// the formula computing to an Excel error such as #DIV/0!.
var errUnknown = errors.New("formula not computable here")

// errCircular means a formula depends on itself, which Excel reports
// rather than computes; the formula library is not asked either.
var errCircular = errors.New("circular reference")

// maxEvalVisits bounds the cells the evaluator reads, all formulas of a
// workbook together: it counts cells, not time, so that whether values
// are cached never depends on the machine. Ten million reads take about
// a tenth of a second.
const maxEvalVisits = 10_000_000

// maxEvalDepth bounds how deep formulas referring to later formulas may
// chain; formulas are evaluated in row order, so only forward references
// nest.
const maxEvalDepth = 2_000

// Evaluation states of a formula cell.
const (
	calcNone uint8 = iota
	calcBusy
	calcDone    // cached holds the value (nil when it was empty)
	calcError   // the formula computes to an Excel error
	calcUnknown // the evaluator cannot compute it
	calcCircular
)

// valueKind is the type of an evaluated value.
type valueKind uint8

const (
	valEmpty valueKind = iota
	valNum
	valStr
	valBool
	valErr
	valRange
)

// value is an intermediate result: a scalar, an Excel error (its code in
// str) or a range.
type value struct {
	kind valueKind
	num  float64
	str  string
	rng  reference
	// sheet is the grid index of a range.
	sheet int
}

var (
	errDiv0  = value{kind: valErr, str: "#DIV/0!"}
	errValue = value{kind: valErr, str: "#VALUE!"}
	errNum   = value{kind: valErr, str: "#NUM!"}
)

func number(f float64) value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return errNum
	}
	return value{kind: valNum, num: f}
}

func boolean(b bool) value {
	if b {
		return value{kind: valBool, num: 1}
	}
	return value{kind: valBool}
}

// evaluator computes the formulas of a workbook.
type evaluator struct {
	grids      [][][]cell
	sheetIndex map[string]int
	visits     int
	depth      int
}

func newEvaluator(names []string, grids [][][]cell) *evaluator {
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[strings.ToLower(n)] = i
	}
	return &evaluator{grids: grids, sheetIndex: idx}
}

// run evaluates every formula, in sheet and row order, and reports how
// many it could not compute.
func (e *evaluator) run() (unknown int) {
	for s, grid := range e.grids {
		for r, row := range grid {
			for c := range row {
				if row[c].kind != kindFormula {
					continue
				}
				e.cellValue(s, r, c)
				if row[c].calc == calcUnknown {
					unknown++
				}
			}
		}
	}
	return unknown
}

// cellValue returns the value of a cell, computing a formula on first
// use.
func (e *evaluator) cellValue(s, r, c int) (value, error) {
	e.visits++
	if e.visits > maxEvalVisits {
		return value{}, errUnknown
	}
	grid := e.grids[s]
	if r >= len(grid) || c >= len(grid[r]) {
		return value{}, nil
	}
	cl := &grid[r][c]
	switch cl.kind {
	case kindEmpty:
		return value{}, nil
	case kindNumber:
		return value{kind: valNum, num: cl.num}, nil
	case kindBool:
		return value{kind: valBool, num: cl.num}, nil
	case kindText:
		return value{kind: valStr, str: cl.text}, nil
	}
	switch cl.calc {
	case calcDone:
		return cachedToValue(cl.cached), nil
	case calcError:
		return value{kind: valErr, str: cl.errCode}, nil
	case calcUnknown:
		return value{}, errUnknown
	case calcBusy, calcCircular:
		return value{}, errCircular
	}
	if e.depth >= maxEvalDepth {
		return value{}, errUnknown
	}
	cl.calc = calcBusy
	e.depth++
	v, err := e.formula(cl.text, s)
	e.depth--
	if err == nil && v.kind == valRange {
		v, err = e.single(v)
	}
	switch {
	case errors.Is(err, errCircular):
		cl.calc = calcCircular
		return value{}, err
	case err != nil:
		cl.calc = calcUnknown
		return value{}, err
	case v.kind == valErr:
		cl.calc, cl.errCode = calcError, v.str
	default:
		cl.calc, cl.cached = calcDone, valueToCached(v)
	}
	return v, nil
}

// single reads a one-cell range as its cell; larger ranges where a
// single value is wanted are Excel's implicit intersection, not computed
// here.
func (e *evaluator) single(v value) (value, error) {
	if v.kind != valRange {
		return v, nil
	}
	if v.rng.row1 != v.rng.row2 || v.rng.col1 != v.rng.col2 {
		return value{}, errUnknown
	}
	return e.cellValue(v.sheet, v.rng.row1, v.rng.col1)
}

func cachedToValue(v any) value {
	switch v := v.(type) {
	case float64:
		return value{kind: valNum, num: v}
	case string:
		return value{kind: valStr, str: v}
	case bool:
		return boolean(v)
	}
	// A formula showing an empty cell's value shows 0.
	return value{kind: valNum}
}

func valueToCached(v value) any {
	switch v.kind {
	case valNum:
		// Fifteen significant digits, which is what Excel shows and
		// what the formula library caches: 5574.6, not 5574.599999999999.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v.num, 'g', 15, 64), 64)
		return r
	case valStr:
		return v.str
	case valBool:
		return v.num == 1
	}
	return 0.0
}

// formula parses and evaluates one formula of sheet s.
func (e *evaluator) formula(text string, s int) (value, error) {
	p := parser{src: text, e: e, sheet: s}
	v, err := p.expr(0)
	if err != nil {
		return value{}, err
	}
	p.space()
	if p.pos != len(p.src) {
		return value{}, errUnknown
	}
	return v, nil
}

// parser evaluates a formula as it reads it (a precedence climber), so
// that no syntax tree is built; IF and IFERROR read the branch they do
// not take without evaluating it.
type parser struct {
	src   string
	pos   int
	e     *evaluator
	sheet int
	// skip is set while reading a branch that is not taken.
	skip int
}

// precedence ranks the binary operators, lowest first, as Excel orders
// them; 0 is no operator.
func precedence(op string) int {
	switch op {
	case "=", "<>", "<", ">", "<=", ">=":
		return 1
	case "&":
		return 2
	case "+", "-":
		return 3
	case "*", "/":
		return 4
	case "^":
		return 5
	}
	return 0
}

func (p *parser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *parser) peekOperator() string {
	p.space()
	if p.pos >= len(p.src) {
		return ""
	}
	if p.pos+1 < len(p.src) {
		if two := p.src[p.pos : p.pos+2]; two == "<>" || two == "<=" || two == ">=" {
			return two
		}
	}
	if op := p.src[p.pos : p.pos+1]; precedence(op) > 0 {
		return op
	}
	return ""
}

// expr reads operands joined by operators binding tighter than min.
func (p *parser) expr(min int) (value, error) {
	left, err := p.unary()
	if err != nil {
		return value{}, err
	}
	for {
		op := p.peekOperator()
		prec := precedence(op)
		if op == "" || prec <= min {
			return left, nil
		}
		p.pos += len(op)
		right, err := p.expr(prec)
		if err != nil {
			return value{}, err
		}
		if p.skip > 0 {
			continue
		}
		if left, err = p.e.binary(op, left, right); err != nil {
			return value{}, err
		}
	}
}

// unary reads signs, an operand and percent signs; in Excel a sign binds
// tighter than "^" (-2^2 is 4).
func (p *parser) unary() (value, error) {
	p.space()
	if p.pos < len(p.src) && (p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		neg := p.src[p.pos] == '-'
		p.pos++
		v, err := p.unary()
		if err != nil || p.skip > 0 || !neg {
			return v, err
		}
		n, err := p.e.toNumber(v)
		if err != nil || n.kind == valErr {
			return n, err
		}
		return number(-n.num), nil
	}
	v, err := p.operand()
	if err != nil {
		return value{}, err
	}
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '%' {
			return v, nil
		}
		p.pos++
		if p.skip > 0 {
			continue
		}
		n, err := p.e.toNumber(v)
		if err != nil || n.kind == valErr {
			return n, err
		}
		v = number(n.num / 100)
	}
}

func (p *parser) operand() (value, error) {
	p.space()
	if p.pos >= len(p.src) {
		return value{}, errUnknown
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		v, err := p.expr(0)
		if err != nil {
			return value{}, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return value{}, errUnknown
		}
		p.pos++
		return v, nil
	case c == '"':
		end := closingQuote(p.src, p.pos)
		if end < 0 {
			return value{}, errUnknown
		}
		s := strings.ReplaceAll(p.src[p.pos+1:end], `""`, `"`)
		p.pos = end + 1
		return value{kind: valStr, str: s}, nil
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case c == '\'':
		end := closingQuote(p.src, p.pos)
		if end < 0 || end+1 >= len(p.src) || p.src[end+1] != '!' {
			return value{}, errUnknown
		}
		sheet := strings.ReplaceAll(p.src[p.pos+1:end], "''", "'")
		p.pos = end + 2
		return p.reference(sheet)
	case c == '$' || isIdentByte(c):
		return p.name()
	}
	return value{}, errUnknown
}

func (p *parser) number() (value, error) {
	start := p.pos
	for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
		p.pos++
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'E' || p.src[p.pos] == 'e') {
		j := p.pos + 1
		if j < len(p.src) && (p.src[j] == '+' || p.src[j] == '-') {
			j++
		}
		if j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
			for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
				j++
			}
			p.pos = j
		}
	}
	f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
	if err != nil {
		return value{}, errUnknown
	}
	return number(f), nil
}

// name reads what starts with a letter or "$": a function call, a sheet
// prefix, TRUE or FALSE, or a reference.
func (p *parser) name() (value, error) {
	start := p.pos
	j := p.pos
	for j < len(p.src) && (isIdentByte(p.src[j]) || p.src[j] == '$') {
		j++
	}
	word := p.src[start:j]
	if j < len(p.src) && p.src[j] == '(' {
		p.pos = j + 1
		return p.call(strings.ToUpper(word))
	}
	if j < len(p.src) && p.src[j] == '!' {
		p.pos = j + 1
		return p.reference(word)
	}
	switch strings.ToUpper(word) {
	case "TRUE":
		p.pos = j
		return boolean(true), nil
	case "FALSE":
		p.pos = j
		return boolean(false), nil
	}
	return p.reference("")
}

// reference reads a cell, a range, or a whole-column range ("B:B") on
// the named sheet ("" for the formula's own).
func (p *parser) reference(sheet string) (value, error) {
	s := p.sheet
	if sheet != "" {
		i, ok := p.e.sheetIndex[strings.ToLower(sheet)]
		if !ok {
			return value{}, errUnknown
		}
		s = i
	}
	if ref, end, ok := parseRange(p.src, p.pos); ok {
		if ref.row2 >= excelize.TotalRows || ref.col2 >= excelize.MaxColumns {
			// Beyond Excel's grid: not a reference at all.
			return value{}, errUnknown
		}
		p.pos = end
		return value{kind: valRange, rng: ref, sheet: s}, nil
	}
	if c1, c2, end, ok := parseColumnRange(p.src, p.pos); ok {
		p.pos = end
		rows := max(len(p.e.grids[s]), 1)
		return value{kind: valRange, rng: reference{col1: c1, col2: c2, row1: 0, row2: rows - 1}, sheet: s}, nil
	}
	return value{}, errUnknown
}

// parseColumnRange reads "B:B" or "$B:$D".
func parseColumnRange(f string, i int) (col1, col2, end int, ok bool) {
	col := func(i int) (int, int, bool) {
		if i < len(f) && f[i] == '$' {
			i++
		}
		j := i
		for j < len(f) && f[j] >= 'A' && f[j] <= 'Z' {
			j++
		}
		if j == i || j-i > 3 {
			return 0, 0, false
		}
		n := 0
		for _, ch := range f[i:j] {
			n = n*26 + int(ch-'A'+1)
		}
		return n - 1, j, true
	}
	c1, j, ok := col(i)
	if !ok || j >= len(f) || f[j] != ':' {
		return 0, 0, 0, false
	}
	c2, j, ok := col(j + 1)
	if !ok || j < len(f) && (isIdentByte(f[j]) || f[j] == '(') {
		return 0, 0, 0, false
	}
	return min(c1, c2), max(c1, c2), j, true
}

// args reads a call's arguments up to its closing bracket. Lazy
// functions read theirs themselves.
func (p *parser) args() ([]value, error) {
	var out []value
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == ')' {
		p.pos++
		return out, nil
	}
	for {
		p.space()
		var v value
		if p.pos < len(p.src) && (p.src[p.pos] == ',' || p.src[p.pos] == ')') {
			v = value{} // an omitted argument
		} else {
			var err error
			if v, err = p.expr(0); err != nil {
				return nil, err
			}
		}
		out = append(out, v)
		p.space()
		if p.pos >= len(p.src) {
			return nil, errUnknown
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return out, nil
		default:
			return nil, errUnknown
		}
	}
}

// call evaluates a function call whose "(" has been read.
func (p *parser) call(name string) (value, error) {
	switch name {
	case "IF", "IFERROR":
		return p.lazyCall(name)
	}
	fn, ok := evalFunctions[name]
	if !ok {
		return value{}, errUnknown
	}
	args, err := p.args()
	if err != nil || p.skip > 0 {
		return value{}, err
	}
	return fn(p.e, args)
}

// lazyCall evaluates IF and IFERROR, reading the branch not taken
// without computing it, as Excel does (so that an IF guarding a
// division by zero is no error).
func (p *parser) lazyCall(name string) (value, error) {
	first, err := p.expr(0)
	if err != nil {
		return value{}, err
	}
	take := -1 // the argument after the first whose value is the result
	var result value
	if p.skip == 0 {
		if first, err = p.e.single(first); err != nil {
			return value{}, err
		}
		switch {
		case name == "IFERROR" && first.kind == valErr:
			take = 0
		case name == "IFERROR", first.kind == valErr:
			result = first
		default:
			b, err := p.e.toBool(first)
			switch {
			case err != nil:
				return value{}, err
			case b.kind == valErr:
				result = b
			case b.num != 0:
				take = 0
			default:
				// IF(FALSE, x) without a third argument is FALSE.
				take, result = 1, boolean(false)
			}
		}
	}
	n := 0
	for ; ; n++ {
		p.space()
		if p.pos >= len(p.src) {
			return value{}, errUnknown
		}
		if p.src[p.pos] == ')' {
			p.pos++
			break
		}
		if p.src[p.pos] != ',' {
			return value{}, errUnknown
		}
		p.pos++
		p.space()
		if n != take {
			p.skip++
		}
		// An omitted argument is 0.
		v := value{kind: valNum}
		if p.pos < len(p.src) && p.src[p.pos] != ',' && p.src[p.pos] != ')' {
			v, err = p.expr(0)
		}
		if n != take {
			p.skip--
		}
		if err != nil {
			return value{}, err
		}
		if n == take {
			result = v
		}
	}
	if n == 0 || n > 2 {
		return value{}, errUnknown
	}
	if p.skip > 0 {
		return value{}, nil
	}
	return result, nil
}

// toNumber coerces a value for arithmetic: empty is 0, TRUE is 1, text
// that reads as a number is that number, other text is #VALUE!.
func (e *evaluator) toNumber(v value) (value, error) {
	v, err := e.single(v)
	if err != nil {
		return value{}, err
	}
	switch v.kind {
	case valEmpty:
		return value{kind: valNum}, nil
	case valNum, valBool:
		return value{kind: valNum, num: v.num}, nil
	case valStr:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.str), 64)
		if err != nil {
			return errValue, nil
		}
		return number(f), nil
	}
	return v, nil
}

func (e *evaluator) toBool(v value) (value, error) {
	v, err := e.single(v)
	if err != nil {
		return value{}, err
	}
	switch v.kind {
	case valEmpty:
		return boolean(false), nil
	case valNum, valBool:
		return boolean(v.num != 0), nil
	case valStr:
		switch strings.ToUpper(v.str) {
		case "TRUE":
			return boolean(true), nil
		case "FALSE":
			return boolean(false), nil
		}
		return errValue, nil
	}
	return v, nil
}

// toText is how Excel joins a value with "&".
func (e *evaluator) toText(v value) (value, error) {
	v, err := e.single(v)
	if err != nil {
		return value{}, err
	}
	switch v.kind {
	case valEmpty:
		return value{kind: valStr}, nil
	case valNum:
		return value{kind: valStr, str: generalText(v.num)}, nil
	case valBool:
		if v.num != 0 {
			return value{kind: valStr, str: "TRUE"}, nil
		}
		return value{kind: valStr, str: "FALSE"}, nil
	}
	return v, nil
}

// generalText writes a number as Excel's General format does in text:
// at most 15 significant digits, no exponent for ordinary magnitudes.
func generalText(f float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if a := math.Abs(r); a != 0 && (a >= 1e21 || a < 1e-9) {
		return strings.ToUpper(strconv.FormatFloat(r, 'g', -1, 64))
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func (e *evaluator) binary(op string, a, b value) (value, error) {
	switch op {
	case "&":
		x, err := e.toText(a)
		if err != nil || x.kind == valErr {
			return x, err
		}
		y, err := e.toText(b)
		if err != nil || y.kind == valErr {
			return y, err
		}
		return value{kind: valStr, str: x.str + y.str}, nil
	case "=", "<>", "<", ">", "<=", ">=":
		return e.compare(op, a, b)
	}
	x, err := e.toNumber(a)
	if err != nil || x.kind == valErr {
		return x, err
	}
	y, err := e.toNumber(b)
	if err != nil || y.kind == valErr {
		return y, err
	}
	switch op {
	case "+":
		return number(x.num + y.num), nil
	case "-":
		return number(x.num - y.num), nil
	case "*":
		return number(x.num * y.num), nil
	case "/":
		if y.num == 0 {
			return errDiv0, nil
		}
		return number(x.num / y.num), nil
	case "^":
		if x.num == 0 && y.num == 0 {
			return errNum, nil
		}
		return number(math.Pow(x.num, y.num)), nil
	}
	return value{}, errUnknown
}

func (e *evaluator) compare(op string, a, b value) (value, error) {
	a, err := e.single(a)
	if err != nil {
		return value{}, err
	}
	if b, err = e.single(b); err != nil {
		return value{}, err
	}
	if a.kind == valErr {
		return a, nil
	}
	if b.kind == valErr {
		return b, nil
	}
	d := compareValues(a, b)
	var r bool
	switch op {
	case "=":
		r = d == 0
	case "<>":
		r = d != 0
	case "<":
		r = d < 0
	case ">":
		r = d > 0
	case "<=":
		r = d <= 0
	case ">=":
		r = d >= 0
	}
	return boolean(r), nil
}

// compareValues orders values as Excel does: numbers before text before
// booleans, text without regard to case, an empty cell as 0, "" or FALSE
// after the other side's type.
func compareValues(a, b value) int {
	if a.kind == valEmpty {
		a = emptyAs(b.kind)
	}
	if b.kind == valEmpty {
		b = emptyAs(a.kind)
	}
	rank := func(k valueKind) int {
		switch k {
		case valNum:
			return 0
		case valStr:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a.kind), rank(b.kind); ra != rb {
		return ra - rb
	}
	if a.kind == valStr {
		return strings.Compare(strings.ToLower(a.str), strings.ToLower(b.str))
	}
	switch {
	case a.num < b.num:
		return -1
	case a.num > b.num:
		return 1
	}
	return 0
}

func emptyAs(k valueKind) value {
	switch k {
	case valStr:
		return value{kind: valStr}
	case valBool:
		return boolean(false)
	}
	return value{kind: valNum}
}
