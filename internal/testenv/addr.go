package testenv

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address that was free a moment ago, for a
// server the test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
