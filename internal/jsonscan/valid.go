package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// ValidMembers is Members for a v not checked with json.Valid: it
// reports false, too, when v is not valid JSON as json.Valid has it,
// checking every value as it steps over it. f is called, in order, for
// the members before the first invalid byte, so a caller drops what it
// made of them when ValidMembers reports false.
func ValidMembers(v []byte, f func(key, value []byte) bool) bool {
	end, ok := items(v, '{', '}', func(i int) (int, bool) {
		keyEnd, start, ok := member(v, i)
		if !ok {
			return 0, false
		}
		// The object itself is the first level of nesting.
		end, ok := validValue(v, start, 1)
		return end, ok && f(v[i:keyEnd], v[start:end])
	})
	return ok && SkipSpace(v, end) == len(v)
}

// maxDepth is how deeply json.Valid lets arrays and objects nest.
const maxDepth = 10000

// validValue returns the end of the valid JSON value that starts at
// v[i], inside depth arrays and objects.
func validValue(v []byte, i, depth int) (int, bool) {
	// The closing brackets of the arrays and objects open in the value,
	// innermost last: on the stack while they are few, as they nearly
	// always are.
	var closersArray [32]byte
	closers := closersArray[:0]
	for {
		if i >= len(v) {
			return 0, false
		}
		var ok bool
		switch c := v[i]; c {
		case '{', '[':
			if depth+len(closers) >= maxDepth {
				return 0, false
			}
			var empty bool
			if i, empty, ok = openItems(v, i+1, closerOf(c)); !ok {
				return 0, false
			}
			if !empty {
				closers = append(closers, closerOf(c))
				continue // at its first value
			}
		case '"':
			i, ok = validString(v, i)
		default:
			i, ok = validScalar(v, i)
		}
		if !ok {
			return 0, false
		}
		// A value ended at v[i]: close the arrays and objects it ends,
		// and go on at the next item, if any.
		if i, ok = nextItem(v, i, &closers); !ok {
			return 0, false
		}
		if len(closers) == 0 {
			return i, true
		}
	}
}

// closerOf is the closing bracket of the opening one c.
func closerOf(c byte) byte {
	if c == '{' {
		return '}'
	}
	return ']'
}

// openItems steps into the array or object whose opening bracket ends
// at v[i] and whose closing one is closer: past closer when it is empty,
// else to its first value, past its key in an object.
func openItems(v []byte, i int, closer byte) (next int, empty, ok bool) {
	i = SkipSpace(v, i)
	if i < len(v) && v[i] == closer {
		return i + 1, true, true
	}
	if closer == '}' {
		i, ok = memberValue(v, i)
		return i, false, ok
	}
	return i, false, true
}

// nextItem steps from the end of a value at v[i] over the closing
// brackets that follow it, popping them off closers, to the start of the
// next item (past its key, in an object), or to i when closers is empty.
func nextItem(v []byte, i int, closers *[]byte) (int, bool) {
	for len(*closers) > 0 {
		i = SkipSpace(v, i)
		if i >= len(v) {
			return 0, false
		}
		innermost := (*closers)[len(*closers)-1]
		switch v[i] {
		case innermost:
			*closers = (*closers)[:len(*closers)-1]
			i++
		case ',':
			i = SkipSpace(v, i+1)
			if innermost == '}' {
				return memberValue(v, i)
			}
			return i, true
		default:
			return 0, false
		}
	}
	return i, true
}

// memberValue steps over the key of the member at v[i] and its colon, to
// where its value starts.
func memberValue(v []byte, i int) (int, bool) {
	_, start, ok := member(v, i)
	return start, ok
}

// member steps over the key of the member at v[i] and its colon: it
// returns where the key ends and where the value starts.
func member(v []byte, i int) (keyEnd, valueStart int, ok bool) {
	keyEnd, ok = validKey(v, i)
	if !ok {
		return 0, 0, false
	}
	i = SkipSpace(v, keyEnd)
	if i >= len(v) || v[i] != ':' {
		return 0, 0, false
	}
	return keyEnd, SkipSpace(v, i+1), true
}

// validKey returns the end of the string at v[i], a member's key.
func validKey(v []byte, i int) (int, bool) {
	if i >= len(v) || v[i] != '"' {
		return 0, false
	}
	return validString(v, i)
}

// stringStops are the bytes a scan of a string stops at: its end, an
// escape, and the control characters JSON does not allow in it.
var stringStops = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// validString returns the end of the valid string whose quote is at
// v[i]. Like json.Valid, it takes any bytes that are not valid UTF-8.
func validString(v []byte, i int) (int, bool) {
	for j := i + 1; ; {
		j = plainRun(v, j)
		for j < len(v) && !stringStops[v[j]] {
			j++
		}
		if j >= len(v) {
			return 0, false
		}
		switch v[j] {
		case '"':
			return j + 1, true
		case '\\':
			n := escapeLen(v[j:])
			if n == 0 {
				return 0, false
			}
			j += n
		default: // a control character
			return 0, false
		}
	}
}

// plainRun steps from v[j] over the bytes that are no stop of a string,
// eight at a time: to the first stop, or to where fewer than eight bytes
// are left, for the bytewise scan. A long text or an inline image is
// scanned a word at a time, and a short string's end found in the word
// it is in.
func plainRun(v []byte, j int) int {
	for ; j+8 <= len(v); j += 8 {
		w := binary.LittleEndian.Uint64(v[j:])
		if m := bytesBelow(w, 0x20) | bytesOf(w, '"') | bytesOf(w, '\\'); m != 0 {
			// The lowest marked byte is a stop: a byte is marked
			// wrongly only above a true one, by its borrow.
			return j + bits.TrailingZeros64(m)/8
		}
	}
	return j
}

// bytesBelow marks, with its top bit, the bytes of w below n (at most
// 0x80): subtracting n from every byte borrows into the top bit of those
// below it, and the top bit of w rules out bytes that had it set
// already. The borrow may mark bytes above a marked one too, never one
// below the first.
func bytesBelow(w uint64, n byte) uint64 {
	return (w - everyByte*uint64(n)) &^ w & (everyByte * 0x80)
}

// bytesOf marks, as bytesBelow does, the bytes of w that are c: those
// that are zero once c is taken out of every byte.
func bytesOf(w uint64, c byte) uint64 { return bytesBelow(w^(everyByte*uint64(c)), 1) }

// everyByte times a byte is that byte in each byte of a word.
const everyByte = 0x0101010101010101

// escapeLen is the length of the valid escape that e starts with, 0 if
// it is none.
func escapeLen(e []byte) int {
	if len(e) < 2 {
		return 0
	}
	switch e[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(e) < 6 {
			return 0
		}
		for _, c := range e[2:6] {
			if !isHex(c) {
				return 0
			}
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validScalar returns the end of the number, true, false or null at
// v[i]. What follows it is for the caller to check.
func validScalar(v []byte, i int) (int, bool) {
	var lit string
	switch v[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	case 'n':
		lit = "null"
	default:
		return validNumber(v, i)
	}
	if len(v)-i >= len(lit) && string(v[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// validNumber returns the end of the number at v[i]: an optional minus,
// an integer without leading zeros, an optional fraction and exponent.
func validNumber(v []byte, i int) (int, bool) {
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && '1' <= v[i] && v[i] <= '9':
		i = digitsEnd(v, i)
	default:
		return 0, false
	}
	if i < len(v) && v[i] == '.' {
		end := digitsEnd(v, i+1)
		if end == i+1 {
			return 0, false
		}
		i = end
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		end := digitsEnd(v, i)
		if end == i {
			return 0, false
		}
		i = end
	}
	return i, true
}

// digitsEnd is the end of the decimal digits that start at v[i].
func digitsEnd(v []byte, i int) int {
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	return i
}
