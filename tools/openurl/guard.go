package openurl

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
)

// DefaultPorts are the ports a Guard lets through to addresses that are
// not allow-listed.
var DefaultPorts = []uint16{80, 443}

// Guard decides which addresses open_url may connect to. It is checked
// for every connection, including those made for redirects, on the
// address actually dialled, so a name that resolves to an internal
// address (DNS rebinding included) is refused like the address itself.
//
// The zero value refuses every internal address and allows public ones
// on DefaultPorts. A Guard is read-only and safe for concurrent use.
type Guard struct {
	// Allow lists prefixes that may be reached although they are
	// private, loopback, link-local or otherwise internal, on any port:
	// intranets the operator chose to expose. Cloud metadata, unspecified,
	// multicast and broadcast addresses are refused even when listed,
	// because no web page lives there. Default: none.
	Allow []netip.Prefix
	// Ports lists the ports allowed on addresses that are not
	// allow-listed. Default: DefaultPorts (80 and 443).
	Ports []uint16
}

// Allowed returns nil when open_url may connect to ap, or else a
// *tools.CallError whose message names the address and why it is
// refused, such as "refused: the address 10.0.0.5 is in a private
// network".
func (g Guard) Allowed(ap netip.AddrPort) error {
	addr := canonical(ap.Addr())
	if !addr.IsValid() {
		return tools.Failf("refused: the address is not valid")
	}
	if why := never(addr); why != "" {
		return refusedAddr(addr, why)
	}
	if g.allowListed(addr) {
		return nil
	}
	if why := blocked(addr); why != "" {
		return refusedAddr(addr, why)
	}
	ports := g.Ports
	if len(ports) == 0 {
		ports = DefaultPorts
	}
	if !slices.Contains(ports, ap.Port()) {
		return tools.Failf("refused: port %d is not allowed (only %s)", ap.Port(), portList(ports))
	}
	return nil
}

func (g Guard) allowListed(addr netip.Addr) bool {
	for _, p := range g.Allow {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// canonical strips what would let one address hide behind another
// spelling: IPv4-mapped IPv6 (::ffff:127.0.0.1) becomes IPv4, and the
// zone is dropped because netip.Prefix.Contains never matches a zoned
// address, which would slip past the range checks.
func canonical(a netip.Addr) netip.Addr {
	return a.WithZone("").Unmap()
}

func refusedAddr(a netip.Addr, why string) error {
	return tools.Failf("refused: the address %s %s", a, why)
}

func portList(ports []uint16) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprint(p)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// rangeRule is a blocked prefix and the reason shown to the model.
type rangeRule struct {
	prefix netip.Prefix
	why    string
}

func rules(why string, prefixes ...string) []rangeRule {
	out := make([]rangeRule, len(prefixes))
	for i, p := range prefixes {
		out[i] = rangeRule{netip.MustParsePrefix(p), why}
	}
	return out
}

// Refusal reasons, as they complete "refused: the address X ...".
const (
	whyMetadata    = "is a cloud metadata endpoint"
	whyUnspecified = "is unspecified (this host)"
	whyMulticast   = "is multicast"
	whyBroadcast   = "is broadcast"
	whyLoopback    = "is loopback (this machine)"
	whyPrivate     = "is in a private network"
	whyLinkLocal   = "is link-local"
	whySharedNAT   = "is in carrier-grade NAT space"
	whyBenchmark   = "is reserved for benchmarking"
	whyDocs        = "is reserved for documentation"
	whyReserved    = "is in a reserved range"
	whyTunnel      = "is a 6to4 or Teredo tunnel address"
	whyNAT64       = "is a NAT64 address of an internal IPv4 address"
)

// neverRules are refused even when allow-listed: nothing a person would
// read lives there, and an allow-list as broad as 0.0.0.0/0 must not
// expose instance credentials.
var neverRules = slices.Concat(
	rules(whyMetadata,
		"169.254.169.254/32", // AWS, GCP, Azure, OpenStack, DigitalOcean
		"169.254.170.2/32",   // AWS ECS task metadata
		"100.100.100.200/32", // Alibaba Cloud
		"fd00:ec2::254/128",  // AWS over IPv6
	),
	rules(whyUnspecified, "0.0.0.0/8", "::/128"),
	rules(whyBroadcast, "255.255.255.255/32"),
	rules(whyMulticast, "224.0.0.0/4", "ff00::/8"),
)

// blockedRules follow the IANA special-purpose address registries. Order
// matters only for the reason shown: the first match wins.
var blockedRules = slices.Concat(
	// IPv4
	rules(whyLoopback, "127.0.0.0/8"),
	rules(whyPrivate, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	rules(whyLinkLocal, "169.254.0.0/16"),
	rules(whySharedNAT, "100.64.0.0/10"),
	rules(whyBenchmark, "198.18.0.0/15"),
	rules(whyDocs, "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	rules(whyReserved,
		"192.0.0.0/24",   // IETF protocol assignments
		"192.88.99.0/24", // former 6to4 relay anycast
		"240.0.0.0/4",    // future use
	),
	// IPv6
	rules(whyLoopback, "::1/128"),
	rules(whyPrivate, "fc00::/7", "fec0::/10"), // unique local; deprecated site-local
	rules(whyLinkLocal, "fe80::/10"),
	rules(whyDocs, "2001:db8::/32", "3fff::/20"),
	// 6to4 and Teredo carry an IPv4 address a relay may deliver to; both
	// are obsolete, so no real site needs them.
	rules(whyTunnel, "2002::/16", "2001::/32"),
	rules(whyBenchmark, "2001:2::/48"),
	rules(whyReserved,
		"::/8",           // IPv4-compatible, IPv4-translated and other legacy forms
		"64:ff9b:1::/48", // local-use NAT64
		"100::/64",       // discard-only
		"2001::/23",      // IETF protocol assignments
		"5f00::/16",      // SRv6 segment identifiers
	),
)

// nat64 is the well-known NAT64 prefix: its last 32 bits are an IPv4
// address that the translator connects to.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// globalUnicast6 holds every IPv6 address the internet routes today;
// anything outside it is unassigned.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// never returns why a must never be reached, or "".
func never(a netip.Addr) string {
	for _, r := range neverRules {
		if r.prefix.Contains(a) {
			return r.why
		}
	}
	if a.Is6() && nat64.Contains(a) {
		if v4 := nat64Embedded(a); never(v4) != "" {
			return whyNAT64
		}
	}
	return ""
}

// blocked returns why a is internal or otherwise unreachable, or "".
func blocked(a netip.Addr) string {
	// Checked before the table, whose ::/8 also holds 64:ff9b::/96: a
	// NAT64 address is as reachable as the IPv4 address it carries.
	if a.Is6() && nat64.Contains(a) {
		if blocked(nat64Embedded(a)) != "" {
			return whyNAT64
		}
		return ""
	}
	for _, r := range blockedRules {
		if r.prefix.Contains(a) {
			return r.why
		}
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return whyReserved
	}
	return ""
}

func nat64Embedded(a netip.Addr) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte(b[12:16]))
}

// ParseAllow parses an allow-list as SWITCHYARD_OPEN_URL_ALLOW holds it:
// CIDR prefixes separated by commas, such as "10.20.0.0/16, fd12::/48".
// A bare address stands for itself alone (/32 or /128). Blanks and empty
// items are ignored, so "" yields an empty list. IPv4-mapped IPv6
// prefixes are rewritten as IPv4, because the Guard checks IPv4 in that
// form.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := parsePrefix(item)
		if err != nil {
			return nil, fmt.Errorf("open_url allow-list: %q is not an IP prefix such as 10.0.0.0/8", item)
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, err
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("zoned address")
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("mapped prefix shorter than /96")
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}
