// Package clip shortens text for messages and bounded fields without
// splitting a UTF-8 character.
package clip

import "unicode/utf8"

// Runes returns s cut to at most n runes.
func Runes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Ellipsis returns s cut to n runes with "…" appended when it was longer,
// for quoting untrusted values in error messages.
func Ellipsis(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Runes(s, n) + "…"
}

// Bytes returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence.
func Bytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
