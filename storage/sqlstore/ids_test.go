package sqlstore

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
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

func TestNewTimeID(t *testing.T) {
	const at = 0x1234_5678_9abc
	id := newTimeID("le_", at)
	if !strings.HasPrefix(id, "le_0000123456789abc") || len(id) != len("le_")+16+12 {
		t.Fatalf("newTimeID = %q, want le_, the time in 16 hex digits and 12 characters", id)
	}
	for _, c := range id[len(id)-12:] {
		if !strings.ContainsRune(base62, c) {
			t.Fatalf("newTimeID = %q has %q, not base62", id, c)
		}
	}
	// Later ids sort after earlier ones.
	if later := newTimeID("le_", at+1); later <= id {
		t.Errorf("newTimeID(at+1) = %q sorts before %q", later, id)
	}
	if other := newTimeID("le_", at); other == id {
		t.Errorf("two ids of the same time are equal: %q", id)
	}
}

func TestChargeNote(t *testing.T) {
	got := chargeNote(storage.UsageRecord{Model: "svc-3", PromptTokens: 12, CompletionTokens: 345})
	if want := "svc-3: 12 prompt + 345 completion tokens"; got != want {
		t.Errorf("chargeNote = %q, want %q", got, want)
	}
}

// A batch's ids come from one read of crypto/rand for many of them, and
// stay as random: distinct, base62, every symbol about as frequent,
// across the refills of the source.
func TestBatchIDsShareReads(t *testing.T) {
	reads := 0
	randRead = func(b []byte) (int, error) { reads++; return rand.Read(b) }
	t.Cleanup(func() { randRead = rand.Read })
	const n = 4000
	var src randomBase62
	seen := make(map[string]bool, n)
	counts := make(map[rune]int)
	var buf []byte
	for range n {
		buf = src.appendTimeID(buf[:0], "rq_", 0x1234_5678_9abc)
		id := string(buf)
		if !strings.HasPrefix(id, "rq_0000123456789abc") || len(id) != len("rq_")+timeIDChars || seen[id] {
			t.Fatalf("id %q: not a time id, or seen before", id)
		}
		seen[id] = true
		for _, c := range id[len(id)-12:] {
			if !strings.ContainsRune(base62, c) {
				t.Fatalf("id %q has %q, not base62", id, c)
			}
			counts[c]++
		}
	}
	// 12 characters an id, from 512 bytes a read less the 3% rejected.
	if max := 1 + n*12/490; reads > max {
		t.Errorf("%d ids took %d reads of crypto/rand, want at most %d", n, reads, max)
	}
	// 48000 characters over 62 symbols: about 774 each.
	for _, c := range base62 {
		if counts[c] < 600 {
			t.Errorf("symbol %q appeared %d times in 48000, want about 774", c, counts[c])
		}
	}
}
