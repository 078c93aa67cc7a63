package upstream

import (
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/jsonstr"
)

// appendText appends s as encoding/json encodes a string, escaping in
// place. Message text is the one string of a body that nearly always
// needs escaping (the system prompt's line breaks, at least), which
// jsonstr.Append leaves to json.Marshal: a copy of the text and the
// encoder's state in garbage, per message, on every request. Text that
// needs none is jsonstr.Append's, copied as it is. A test holds it to
// encoding/json's bytes.
func appendText(b []byte, s string) []byte {
	i := 0
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	if i == len(s) {
		return jsonstr.Append(b, s)
	}
	b = append(b, '"')
	b = append(b, s[:i]...)
	start := i
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				// Other controls, and <, > and & as encoding/json
				// escapes them for HTML.
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// jsonSafe holds the ASCII bytes encoding/json writes as they are, HTML
// escaping on; every byte of a multi-byte character is false.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		switch c {
		case '"', '\\', '<', '>', '&':
		default:
			t[c] = true
		}
	}
	return t
}()
