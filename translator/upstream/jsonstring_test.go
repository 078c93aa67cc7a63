package upstream

import (
	"encoding/json"
	"testing"
)

// FuzzAppendText holds appendText to encoding/json's bytes for every
// string.
func FuzzAppendText(f *testing.F) {
	for _, s := range []string{"", "plain", "two\nlines", "a\"b\\c", "\x00\x01\b\f\r\t\x1f\x7f", "<&>", "héllo\n",
		"\u2028x\u2029", "\xff", "é\xffé", "\xe2\x80", "tail é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendText([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("appendText(%q) = %s, want x%s", s, got, want)
		}
	})
}

// Text with line breaks, as every system prompt has, is escaped without
// a copy of its own.
func TestAppendTextAllocatesNothing(t *testing.T) {
	s := "You are a helpful assistant.\n\n## Context\n\"quoted\" <b> & é\u2028"
	b := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { b = appendText(b[:0], s) }); n != 0 {
		t.Errorf("appendText allocated %.0f times", n)
	}
}
