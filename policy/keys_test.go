package policy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/testenv"
)

func TestNewKeyFormat(t *testing.T) {
	seen := make(map[string]bool)
	for i := 0; i < 1000; i++ {
		k := NewKey()
		if !ValidKeyFormat(k) {
			t.Fatalf("NewKey() = %q, not in the key format", k)
		}
		if len(k) != len(KeyPrefix)+keyRandomChars {
			t.Fatalf("len(NewKey()) = %d", len(k))
		}
		if seen[k] {
			t.Fatalf("NewKey() repeated %q", k)
		}
		seen[k] = true
	}
}

func TestRandomBase62IsUniform(t *testing.T) {
	// 620,000 draws: each character is expected 10,000 times; a biased
	// modulo (byte%62 without rejection) would give the first 8
	// characters about 10,400.
	counts := make(map[rune]int)
	for _, c := range RandomBase62(620_000) {
		counts[c]++
	}
	if len(counts) != 62 {
		t.Fatalf("saw %d distinct characters, want 62", len(counts))
	}
	for c, n := range counts {
		if n < 9_500 || n > 10_500 {
			t.Errorf("character %q drawn %d times, want about 10000", c, n)
		}
	}
}

func TestValidKeyFormat(t *testing.T) {
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"issued", "sk-" + strings.Repeat("a", 48), true},
		{"shortest", "sk-" + strings.Repeat("Z", 40), true},
		{"longest", "sk-" + strings.Repeat("9", 128), true},
		{"too short", "sk-" + strings.Repeat("a", 39), false},
		{"too long", "sk-" + strings.Repeat("a", 129), false},
		{"wrong prefix", "pk-" + strings.Repeat("a", 48), false},
		{"no prefix", strings.Repeat("a", 51), false},
		{"upper prefix", "SK-" + strings.Repeat("a", 48), false},
		{"dash inside", "sk-" + strings.Repeat("a", 20) + "-" + strings.Repeat("a", 27), false},
		{"non-ascii", "sk-" + strings.Repeat("a", 47) + "é", false},
		{"nul", "sk-" + strings.Repeat("a", 47) + "\x00", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidKeyFormat(tt.key); got != tt.want {
				t.Errorf("ValidKeyFormat(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

// isBase62 takes exactly the characters of the alphabet keys are made of.
func TestIsBase62IsTheAlphabet(t *testing.T) {
	for c := range 256 {
		if got, want := isBase62(byte(c)), strings.IndexByte(base62, byte(c)) >= 0; got != want {
			t.Errorf("isBase62(%q) = %v, want %v", byte(c), got, want)
		}
	}
}

func TestKeyHint(t *testing.T) {
	if got := KeyHint("sk-abcdefgh1B2c"); got != "sk-...1B2c" {
		t.Errorf("KeyHint = %q", got)
	}
	if got := KeyHint("sk-"); got != "sk-..." {
		t.Errorf("KeyHint of a short key = %q", got)
	}
}

func TestKeyHasher(t *testing.T) {
	if _, err := NewKeyHasher([]byte("short")); err == nil {
		t.Fatal("NewKeyHasher accepted a 5-byte secret")
	}
	a, _ := NewKeyHasher([]byte(strings.Repeat("a", 32)))
	b, _ := NewKeyHasher([]byte(strings.Repeat("b", 32)))
	key := NewKey()
	if a.Hash(key) != a.Hash(key) {
		t.Error("hash is not deterministic")
	}
	if a.Hash(key) == b.Hash(key) {
		t.Error("different secrets gave the same hash")
	}
	if a.Hash(key) == a.Hash(NewKey()) {
		t.Error("different keys gave the same hash")
	}
	if h := a.Hash(key); len(h) != 64 || strings.Contains(h, key) {
		t.Errorf("hash %q is not 64 hex characters", h)
	}
}

// A label ends up in the dashboard, the CLI's tables, alert emails and the
// audit log: control characters there could forge lines or escape codes.
func TestValidKeyLabel(t *testing.T) {
	long := strings.Repeat("é", 200)
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"", true},
		{"laptop", true},
		{"CI – nightly 東京", true},
		{long, true},
		{long + "x", false},
		{"two\nlines", false},
		{"bell\a", false},
		{"\x1b[31mred", false},
		{"del\x7f", false},
		{"c1\u0085next", false},
		{"bidi\u202eevil", false},
		{"bad \xff utf-8", false},
	} {
		err := ValidKeyLabel(tc.label)
		if (err == nil) != tc.ok {
			t.Errorf("ValidKeyLabel(%q) = %v, want ok=%v", tc.label, err, tc.ok)
		}
		if err != nil && apierror.From(err).Code != "invalid_label" {
			t.Errorf("ValidKeyLabel(%q) code = %q, want invalid_label", tc.label, apierror.From(err).Code)
		}
	}
}

// TestKeyHasherIsHMACSHA256: the pooled hash states give the HMAC of
// each key alone, whatever keys they hashed before, short or long.
func TestKeyHasherIsHMACSHA256(t *testing.T) {
	secret := []byte(strings.Repeat("s", 32))
	h, err := NewKeyHasher(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{NewKey(), "", strings.Repeat("k", 5000), NewKey(), "x"} {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(key))
		if got, want := h.Hash(key), hex.EncodeToString(m.Sum(nil)); got != want {
			t.Errorf("Hash(%.20q) = %s, want %s", key, got, want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { h.Hash("sk-test") }); n != 1 && !testenv.RaceEnabled {
		t.Errorf("Hash allocates %v times, want 1 (its result)", n)
	}
}
