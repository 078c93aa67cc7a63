package openurl

import (
	"net/netip"
	"strings"
)

// Settings tune the open_url tool.
type Settings struct {
	// CIDR prefixes open_url may reach although they are private or
	// loopback, on any port (intranets). Default: the comma-separated
	// list in $SWITCHYARD_OPEN_URL_ALLOW, else none: only public
	// addresses on ports 80 and 443.
	Allow []string `json:"allow,omitempty"`
}

// EnvAllow is the environment variable read when the config allows
// nothing. Part of the operator contract.
const EnvAllow = "SWITCHYARD_OPEN_URL_ALLOW"

// Allowed is the list of prefixes c and the environment allow, parsed.
// lookup returns a configured value, its placeholders replaced, or when
// it is empty the environment variable env. c may be nil.
func (c *Settings) Allowed(lookup func(configured, env string) string) ([]netip.Prefix, error) {
	if c == nil || len(c.Allow) == 0 {
		return ParseAllow(lookup("", EnvAllow))
	}
	items := make([]string, len(c.Allow))
	for i, a := range c.Allow {
		items[i] = lookup(a, "")
	}
	return ParseAllow(strings.Join(items, ","))
}
