package sqlstore

import (
	"strings"
	"testing"
)

func TestNewID(t *testing.T) {
	seen := make(map[string]bool)
	counts := make(map[rune]int)
	for range 2000 {
		id := newID("key_")
		if !strings.HasPrefix(id, "key_") || len(id) != len("key_")+idChars {
			t.Fatalf("newID = %q, want key_ and %d characters", id, idChars)
		}
		if seen[id] {
			t.Fatalf("newID returned %q twice", id)
		}
		seen[id] = true
		for _, c := range id[len("key_"):] {
			if !strings.ContainsRune(base62, c) {
				t.Fatalf("newID = %q has %q, not base62", id, c)
			}
			counts[c]++
		}
	}
	// 44000 characters over 62 symbols: about 710 each. A symbol that
	// never or hardly appears means a broken alphabet mapping.
	for _, c := range base62 {
		if counts[c] < 500 {
			t.Errorf("symbol %q appeared %d times in 44000, want about 710", c, counts[c])
		}
	}
}
