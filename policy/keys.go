// Package policy decides who may use the gateway and how much: API key
// authentication, the revision profiles, and (in policy/limits) the rate,
// concurrency and admission limits.
package policy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"strings"
	"sync"
)

const (
	// KeyPrefix starts every API key (spec section 5).
	KeyPrefix = "sk-"
	// keyRandomChars is the length of a new key's random part: 48 base62
	// characters carry 285 bits of entropy.
	keyRandomChars = 48
	// Presented keys may be longer than the ones issued today, but not
	// shorter than the 40 random characters keys have always had, and not
	// absurdly long: the length check runs before any hashing or lookup.
	minKeyRandomChars = 40
	maxKeyRandomChars = 128
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n characters drawn uniformly from crypto/rand.
func RandomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+8)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("policy: crypto/rand failed: " + err.Error()) // never happens on supported systems
		}
		for _, b := range buf {
			// 248 is the largest multiple of 62 below 256: rejecting
			// bytes at or above it keeps every character equally likely.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// NewKey returns a fresh API key.
func NewKey() string { return KeyPrefix + RandomBase62(keyRandomChars) }

// ValidKeyFormat reports whether key looks like an API key: the prefix and
// 40 to 128 base62 characters.
func ValidKeyFormat(key string) bool {
	rest, ok := strings.CutPrefix(key, KeyPrefix)
	if !ok || len(rest) < minKeyRandomChars || len(rest) > maxKeyRandomChars {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !isBase62(rest[i]) {
			return false
		}
	}
	return true
}

// isBase62 reports whether c is one of base62's characters: a look-up of
// c in the alphabet would scan it for every character of every key, and
// three ranges compared for each would take three times the table's work.
func isBase62(c byte) bool { return base62Chars[c] }

var base62Chars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
	}
	return t
}()

// KeyHint is the display form of a key, safe to log and show: "sk-...a1B2".
func KeyHint(key string) string {
	if len(key) < len(KeyPrefix)+4 {
		return KeyPrefix + "..."
	}
	return KeyPrefix + "..." + key[len(key)-4:]
}

// KeyHasher hashes keys for storage and lookup with HMAC-SHA256 under a
// server secret, so that a copy of the database alone does not let anyone
// test candidate keys.
type KeyHasher struct {
	secret []byte
	// macs keeps keyed HMAC states for reuse: keying one costs more than
	// hashing a key, and every request hashes one.
	macs *sync.Pool
}

// ErrWeakSecret is returned for secrets too short to key an HMAC safely.
var ErrWeakSecret = errors.New("key secret must be at least 32 bytes")

// NewKeyHasher returns a hasher keyed with secret.
func NewKeyHasher(secret []byte) (KeyHasher, error) {
	if len(secret) < 32 {
		return KeyHasher{}, ErrWeakSecret
	}
	s := append([]byte(nil), secret...)
	return KeyHasher{secret: s, macs: &sync.Pool{New: func() any { return &keyMAC{mac: hmac.New(sha256.New, s)} }}}, nil
}

// keyMAC is a keyed HMAC state with the buffers a hash needs: the key's
// bytes and the sum, which would otherwise escape to the heap through
// the hash.Hash interface on every request.
type keyMAC struct {
	mac hash.Hash
	in  []byte
	sum [sha256.Size]byte
}

// Hash returns the hex HMAC-SHA256 of key.
func (h KeyHasher) Hash(key string) string {
	out := h.hexSum(key)
	return string(out[:])
}

// hexHash is a key's hash as Hash returns it, in an array: authentication
// looks it up in the key cache without a string of its own.
type hexHash [2 * sha256.Size]byte

// hexSum is Hash in an array.
func (h KeyHasher) hexSum(key string) (out hexHash) {
	if h.macs == nil {
		m := hmac.New(sha256.New, h.secret)
		_, _ = io.WriteString(m, key)
		hex.Encode(out[:], m.Sum(nil))
		return out
	}
	k := h.macs.Get().(*keyMAC)
	defer h.macs.Put(k)
	k.mac.Reset()
	k.in = append(k.in[:0], key...)
	_, _ = k.mac.Write(k.in)
	hex.Encode(out[:], k.mac.Sum(k.sum[:0]))
	if cap(k.in) > 1<<10 {
		k.in = nil // a pooled state keeps no outsized key
	}
	return out
}
