package openurl

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

func TestGuardAllowed(t *testing.T) {
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	everything := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	tests := []struct {
		name  string
		addr  string
		allow []netip.Prefix
		want  string // substring of the refusal; "" means allowed
	}{
		{name: "public v4 on 443", addr: "93.184.215.14:443"},
		{name: "public v4 on 80", addr: "93.184.215.14:80"},
		{name: "public v6 on 443", addr: "[2606:4700::6810:84e5]:443"},
		{name: "public v4 on 8080", addr: "93.184.215.14:8080", want: "port 8080 is not allowed (only 80 and 443)"},
		{name: "public v4 on 22", addr: "93.184.215.14:22", want: "port 22 is not allowed"},
		{name: "loopback", addr: "127.0.0.1:80", want: "127.0.0.1 is loopback"},
		{name: "loopback elsewhere in 127/8", addr: "127.3.2.1:443", want: "is loopback"},
		{name: "v6 loopback", addr: "[::1]:80", want: "::1 is loopback"},
		{name: "10/8", addr: "10.0.0.1:80", want: "10.0.0.1 is in a private network"},
		{name: "172.16/12", addr: "172.16.0.1:80", want: "is in a private network"},
		{name: "172.31 edge", addr: "172.31.255.255:80", want: "is in a private network"},
		{name: "172.32 is public", addr: "172.32.0.1:80"},
		{name: "192.168/16", addr: "192.168.1.1:80", want: "is in a private network"},
		{name: "unique local", addr: "[fd00::1]:80", want: "fd00::1 is in a private network"},
		{name: "site local", addr: "[fec0::1]:80", want: "is in a private network"},
		{name: "link-local", addr: "169.254.1.1:80", want: "is link-local"},
		{name: "v6 link-local", addr: "[fe80::1]:80", want: "is link-local"},
		{name: "v6 link-local with zone", addr: "[fe80::1%eth0]:80", want: "fe80::1 is link-local"},
		{name: "metadata", addr: "169.254.169.254:80", want: "is a cloud metadata endpoint"},
		{name: "ECS metadata", addr: "169.254.170.2:80", want: "is a cloud metadata endpoint"},
		{name: "metadata v6", addr: "[fd00:ec2::254]:80", want: "is a cloud metadata endpoint"},
		{name: "alibaba metadata", addr: "100.100.100.200:80", want: "is a cloud metadata endpoint"},
		{name: "CGNAT", addr: "100.64.0.1:80", want: "carrier-grade NAT"},
		{name: "benchmarking", addr: "198.18.0.1:80", want: "benchmarking"},
		{name: "documentation", addr: "203.0.113.9:80", want: "documentation"},
		{name: "v6 documentation", addr: "[2001:db8::1]:80", want: "documentation"},
		{name: "reserved 240/4", addr: "240.0.0.1:80", want: "reserved"},
		{name: "broadcast", addr: "255.255.255.255:80", want: "is broadcast"},
		{name: "multicast", addr: "224.0.0.1:80", want: "is multicast"},
		{name: "v6 multicast", addr: "[ff02::1]:80", want: "is multicast"},
		{name: "unspecified", addr: "0.0.0.0:80", want: "is unspecified"},
		{name: "this network", addr: "0.1.2.3:80", want: "is unspecified"},
		{name: "v6 unspecified", addr: "[::]:80", want: "is unspecified"},
		{name: "mapped loopback", addr: "[::ffff:127.0.0.1]:80", want: "127.0.0.1 is loopback"},
		{name: "mapped private", addr: "[::ffff:10.1.2.3]:80", want: "10.1.2.3 is in a private network"},
		{name: "mapped metadata", addr: "[::ffff:169.254.169.254]:80", want: "metadata"},
		{name: "mapped public", addr: "[::ffff:93.184.215.14]:443"},
		{name: "IPv4-compatible loopback", addr: "[::127.0.0.1]:80", want: "reserved"},
		{name: "IPv4-translated loopback", addr: "[::ffff:0:127.0.0.1]:80", want: "reserved"},
		{name: "NAT64 of loopback", addr: "[64:ff9b::127.0.0.1]:80", want: "NAT64"},
		{name: "NAT64 of private", addr: "[64:ff9b::a00:1]:80", want: "NAT64"},
		{name: "NAT64 of metadata", addr: "[64:ff9b::169.254.169.254]:80", want: "NAT64"},
		{name: "NAT64 of public", addr: "[64:ff9b::93.184.215.14]:443"},
		{name: "local-use NAT64", addr: "[64:ff9b:1::1]:80", want: "reserved"},
		{name: "6to4", addr: "[2002:7f00:1::1]:80", want: "6to4 or Teredo"},
		{name: "Teredo", addr: "[2001:0:4136:e378:8000:63bf:3fff:fdd2]:80", want: "6to4 or Teredo"},
		{name: "unassigned v6", addr: "[4000::1]:80", want: "reserved"},

		{name: "allow-listed loopback on any port", addr: "127.0.0.1:8080", allow: loopback},
		{name: "allow-list does not widen", addr: "10.0.0.1:80", allow: loopback, want: "private network"},
		{name: "allow-list matches mapped form", addr: "[::ffff:127.0.0.1]:9", allow: loopback},
		{name: "allow-list cannot expose metadata", addr: "169.254.169.254:80", allow: everything, want: "metadata"},
		{name: "allow-list cannot expose unspecified", addr: "0.0.0.0:80", allow: everything, want: "unspecified"},
		{name: "allow-list cannot expose NAT64 metadata", addr: "[64:ff9b::169.254.169.254]:80", allow: everything, want: "NAT64"},
		{name: "allow everything reaches private", addr: "192.168.0.7:5432", allow: everything},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Guard{Allow: tt.allow}.Allowed(netip.MustParseAddrPort(tt.addr))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Allowed(%s) = %v, want nil", tt.addr, err)
				}
				return
			}
			wantRefusal(t, err, tt.want)
		})
	}
}

func TestGuardPorts(t *testing.T) {
	g := Guard{Ports: []uint16{8443}}
	if err := g.Allowed(netip.MustParseAddrPort("93.184.215.14:8443")); err != nil {
		t.Errorf("configured port refused: %v", err)
	}
	err := g.Allowed(netip.MustParseAddrPort("93.184.215.14:443"))
	if err == nil || !strings.Contains(err.Error(), "port 443 is not allowed (only 8443)") {
		t.Errorf("port outside the configured list: %v", err)
	}
}

func TestGuardControl(t *testing.T) {
	g := Guard{}
	tests := []struct {
		name    string
		address string
		ok      bool
	}{
		{name: "loopback", address: "127.0.0.1:80"},
		{name: "mapped loopback", address: "[::ffff:127.0.0.1]:443"},
		{name: "not an address", address: "localhost:80"},
		{name: "public", address: "93.184.215.14:443", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.control("tcp", tt.address, nil)
			if (err == nil) != tt.ok {
				t.Errorf("control(%s) = %v, want ok=%v", tt.address, err, tt.ok)
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		{name: "empty", in: ""},
		{name: "blanks", in: " , ,"},
		{name: "two prefixes", in: "10.20.0.0/16, fd12::/48", want: []string{"10.20.0.0/16", "fd12::/48"}},
		{name: "bare addresses", in: "127.0.0.1,::1", want: []string{"127.0.0.1/32", "::1/128"}},
		{name: "host bits are masked", in: "10.1.2.3/8", want: []string{"10.0.0.0/8"}},
		{name: "mapped prefix becomes IPv4", in: "::ffff:10.0.0.0/104", want: []string{"10.0.0.0/8"}},
		{name: "garbage", in: "10.0.0.0/8,intranet", wantErr: true},
		{name: "bad bits", in: "10.0.0.0/33", wantErr: true},
		{name: "zone", in: "fe80::1%eth0", wantErr: true},
		{name: "short mapped prefix", in: "::ffff:0:0/90", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAllow(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseAllow(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if strings.Join(s, " ") != strings.Join(tt.want, " ") {
				t.Errorf("ParseAllow(%q) = %v, want %v", tt.in, s, tt.want)
			}
		})
	}
}

// referenceBlocked is written apart from the guard's own tables, from the
// IANA special-purpose registries, so that the fuzz target checks the
// guard against an independent statement of what must be refused.
var referenceBlocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/127", "fc00::/7", "fe80::/10", "ff00::/8", "2001:db8::/32",
		"2002::/16", "2001::/32", "::/96", "::ffff:0:0:0/96",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

var referenceNever = []netip.Prefix{
	netip.MustParsePrefix("169.254.169.254/32"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
	netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("::/128"),
}

// refBlocked reports whether the reference lists refuse a, looking
// through IPv4-mapped and NAT64 forms.
func refBlocked(a netip.Addr, list []netip.Prefix) bool {
	a = a.WithZone("").Unmap()
	if a.Is6() && netip.MustParsePrefix("64:ff9b::/96").Contains(a) {
		b := a.As16()
		return refBlocked(netip.AddrFrom4([4]byte(b[12:])), list)
	}
	for _, p := range list {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func FuzzGuardAllowed(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1}, uint16(80), []byte{127, 0, 0, 0}, uint8(8))
	f.Add([]byte{169, 254, 169, 254}, uint16(80), []byte{0, 0, 0, 0}, uint8(0))
	f.Add(netip.MustParseAddr("::ffff:10.0.0.1").AsSlice(), uint16(443), []byte{}, uint8(0))
	f.Add(netip.MustParseAddr("64:ff9b::7f00:1").AsSlice(), uint16(443), []byte{}, uint8(0))
	f.Add([]byte{93, 184, 215, 14}, uint16(8080), []byte{}, uint8(0))
	f.Add(netip.MustParseAddr("fd00:ec2::254").AsSlice(), uint16(80), netip.MustParseAddr("fd00::").AsSlice(), uint8(8))
	f.Fuzz(func(t *testing.T, addr []byte, port uint16, allowAddr []byte, allowBits uint8) {
		a, ok := netip.AddrFromSlice(addr)
		if !ok {
			t.Skip()
		}
		var allow []netip.Prefix
		if pa, ok := netip.AddrFromSlice(allowAddr); ok {
			allow = append(allow, netip.PrefixFrom(pa, int(allowBits)%(pa.BitLen()+1)).Masked())
		}
		g := Guard{Allow: allow}
		err := g.Allowed(netip.AddrPortFrom(a, port))
		if err != nil {
			var ce *tools.CallError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, "refused: ") {
				t.Fatalf("refusal %v is not a model-readable *tools.CallError", err)
			}
			return
		}
		c := a.WithZone("").Unmap()
		if refBlocked(c, referenceNever) {
			t.Fatalf("allowed %v, which must never be reached (allow %v)", a, allow)
		}
		listed := false
		for _, p := range allow {
			listed = listed || p.Contains(c)
		}
		if listed {
			return
		}
		if refBlocked(c, referenceBlocked) {
			t.Fatalf("allowed %v, which is in a blocked range and not allow-listed (allow %v)", a, allow)
		}
		if port != 80 && port != 443 {
			t.Fatalf("allowed %v on port %d", a, port)
		}
	})
}

func BenchmarkGuardAllowed(b *testing.B) {
	g := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}
	addrs := []netip.AddrPort{
		netip.MustParseAddrPort("93.184.215.14:443"),
		netip.MustParseAddrPort("[2606:4700::6810:84e5]:443"),
		netip.MustParseAddrPort("10.20.1.1:8080"),
		netip.MustParseAddrPort("192.168.1.1:80"),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = g.Allowed(addrs[i%len(addrs)])
	}
}
