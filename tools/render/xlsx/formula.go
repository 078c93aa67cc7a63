package xlsx

import (
	"errors"
	"strings"
)

// volatileFunctions return a different value at every calculation. A
// workbook that uses one gets no cached values at all, because a value
// computed now would make the bytes depend on the clock, and every
// formula fed by one would be stale anyway.
var volatileFunctions = map[string]bool{
	"NOW": true, "TODAY": true, "RAND": true, "RANDBETWEEN": true, "RANDARRAY": true,
}

// scanFormula reads a formula (without its "=") far enough to catch what
// would make Excel refuse the file: quotes left open and brackets that do
// not pair up. It also reports whether the formula calls a volatile
// function. It is no full parser: an unknown function or a wrong
// argument count is Excel's #NAME? or #VALUE!, not a broken file.
func scanFormula(f string) (volatile bool, err error) {
	var stack []byte
	ident := -1 // start of the identifier being read, or -1
	for i := 0; i < len(f); i++ {
		c := f[i]
		if isIdentByte(c) {
			if ident < 0 {
				ident = i
			}
			continue
		}
		if c == '(' && ident >= 0 && volatileFunctions[strings.ToUpper(f[ident:i])] {
			volatile = true
		}
		ident = -1
		switch c {
		case '"', '\'':
			end := closingQuote(f, i)
			if end < 0 {
				if c == '"' {
					return volatile, errors.New("a text in double quotes is not closed")
				}
				return volatile, errors.New("a sheet name in single quotes is not closed")
			}
			i = end
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return volatile, errors.New("a closing " + string(c) + " has no opening " + string(open))
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return volatile, errors.New("an opening " + string(stack[len(stack)-1]) + " is not closed")
	}
	return volatile, nil
}

// closingQuote returns the index of the quote closing the one at i, where
// a doubled quote stands for itself, or -1.
func closingQuote(f string, i int) int {
	q := f[i]
	for j := i + 1; j < len(f); j++ {
		if f[j] != q {
			continue
		}
		if j+1 < len(f) && f[j+1] == q {
			j++
			continue
		}
		return j
	}
	return -1
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0x80
}

// checkFormula returns scanFormula's error as advice for the writer.
func checkFormula(body string) error {
	if _, err := scanFormula(body); err != nil {
		return errors.New("the formula =" + shorten(body, 60) + " is malformed (" + err.Error() +
			"); fix it, or start the cell with an apostrophe ('=...) to keep it as text")
	}
	return nil
}

// shorten cuts s to at most n characters for a message.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
