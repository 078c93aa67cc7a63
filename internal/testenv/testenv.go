// Package testenv gives tests the real services they run against: a fresh
// PostgreSQL database or a private Redis key prefix per test. When a
// service is unreachable the test fails, with a message saying how to
// start it; it is never skipped.
package testenv

import (
	"crypto/rand"
	"os"
)

// randomName returns n random lowercase letters and digits, which are safe
// unquoted in SQL identifiers and in Redis glob patterns.
func randomName(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func getenv(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
