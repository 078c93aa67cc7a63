// Package jsonstr writes JSON strings on the request path without
// encoding/json's reflection, byte for byte as encoding/json writes them.
package jsonstr

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Append appends s as encoding/json encodes a string. Text that needs no
// escaping, nearly every name and token, is copied as it is; anything
// else is left to encoding/json.
func Append(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			if c < utf8.RuneSelf || !plainUTF8(s[i:]) {
				q, _ := json.Marshal(s) // a string always marshals
				return append(b, q...)
			}
			break
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainUTF8 reports whether s is valid UTF-8 with no byte encoding/json
// would escape: no ASCII control, quote, backslash or HTML character, no
// U+2028 or U+2029.
func plainUTF8(s string) bool {
	if !utf8.ValidString(s) || strings.Contains(s, "\u2028") || strings.Contains(s, "\u2029") {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
