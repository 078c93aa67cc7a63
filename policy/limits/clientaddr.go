package limits

import (
	"net"
	"net/netip"
)

// ClientAddr is the address AuthFailures counts a client's failures
// for: its client IP (the remote address, or the forwarded one from a
// trusted proxy; "" when there is none), else the host of remoteAddr,
// with IPv6 cut to its /64, the block one host usually gets.
func ClientAddr(clientIP, remoteAddr string) string {
	s := clientIP
	if s == "" {
		s = remoteAddr
		if host, _, err := net.SplitHostPort(s); err == nil {
			s = host
		}
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return s
	}
	if ip.Is4() {
		return s // ParseAddr takes IPv4 only in the form String gives
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
