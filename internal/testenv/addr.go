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

// FreeAddrs is n distinct free loopback addresses. Each FreeAddr closes
// its listener before the next is opened, so two calls in a row may get
// the same port back from the kernel; these are held open until all n
// are chosen.
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}
