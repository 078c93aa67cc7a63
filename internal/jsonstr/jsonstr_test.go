package jsonstr

import (
	"encoding/json"
	"testing"
)

// FuzzAppend holds Append to encoding/json's bytes for every string.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "model", "a\"b", "a\\b", "\x01", "<&>", "héllo", "\u2028", "\xff", "é\xff", "text\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %s, want x%s", s, got, want)
		}
	})
}
