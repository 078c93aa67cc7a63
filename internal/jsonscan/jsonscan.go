// Package jsonscan steps over JSON values without decoding them. Most of
// it is for bodies already checked with json.Valid, split at the top
// level or one level down many times per request: a string is skipped
// with bytes.IndexByte, so an inline image of many megabytes costs one
// scan, not one per level as json.RawMessage would (translator/request's
// BenchmarkParse and billing's BenchmarkParseV1 keep that claim honest).
// ValidMembers is for a body not yet checked: it checks as it splits, in
// one pass where json.Valid and Members would take two (valid.go). On
// invalid input the functions report false; they never panic.
package jsonscan

import "bytes"

// Members calls f with the raw key (quotes and escapes included) and the
// raw value of every member of the object v, in order. It reports false
// when v is not one object or f returned false.
func Members(v []byte, f func(key, value []byte) bool) bool {
	_, ok := items(v, '{', '}', func(i int) (int, bool) {
		end, ok := SkipValue(v, i)
		if !ok || v[i] != '"' {
			return 0, false
		}
		key := v[i:end]
		i = SkipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return 0, false
		}
		i = SkipSpace(v, i+1)
		end, ok = SkipValue(v, i)
		return end, ok && f(key, v[i:end])
	})
	return ok
}

// Elements calls f with every element of the array v, in order. It
// reports false when v is not one array or f returned false.
func Elements(v []byte, f func(value []byte) bool) bool {
	_, ok := items(v, '[', ']', func(i int) (int, bool) {
		end, ok := SkipValue(v, i)
		return end, ok && f(v[i:end])
	})
	return ok
}

// items walks the comma-separated items between open and closing, which
// must start v but for white space, and returns the end of closing.
// item reads the item that starts at v[i] and returns where it ends, or
// false to stop the walk.
func items(v []byte, open, closing byte, item func(i int) (int, bool)) (int, bool) {
	i := SkipSpace(v, 0)
	if i >= len(v) || v[i] != open {
		return 0, false
	}
	i = SkipSpace(v, i+1)
	if i < len(v) && v[i] == closing {
		return i + 1, true
	}
	for i < len(v) {
		end, ok := item(i)
		if !ok {
			return 0, false
		}
		i = SkipSpace(v, end)
		if i >= len(v) {
			return 0, false
		}
		switch v[i] {
		case ',':
			i = SkipSpace(v, i+1)
		case closing:
			return i + 1, true
		default:
			return 0, false
		}
	}
	return 0, false
}

// SkipValue returns the end of the value that starts at v[i].
func SkipValue(v []byte, i int) (int, bool) {
	if i >= len(v) {
		return 0, false
	}
	switch v[i] {
	case '"':
		return SkipString(v, i)
	case '{', '[':
		depth := 0
		for i < len(v) {
			switch v[i] {
			case '"':
				end, ok := SkipString(v, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default: // number, true, false, null
		start := i
		for i < len(v) && !endsLiteral(v[i]) {
			i++
		}
		return i, i > start
	}
}

// endsLiteral reports whether c ends a number or literal.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// SkipString returns the end of the string whose quote is at v[i].
func SkipString(v []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(v[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && v[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\r' || v[i] == '\n') {
		i++
	}
	return i
}
