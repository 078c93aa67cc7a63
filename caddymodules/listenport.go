package caddymodules

import (
	"net"
	"os"
)

// Caddyfile.example serves every Host header on $SWITCHYARD_LISTEN, so its
// site address names only a port (http://:{$SWITCHYARD_LISTEN_PORT}) and
// `bind {$SWITCHYARD_LISTEN}` gives the host: Caddy's bind keeps only the
// host of an address, and a Caddyfile cannot split a variable. The port is
// set apart here, before Caddy reads any Caddyfile; one set by hand wins.
func init() {
	if port, ok := listenPort(os.Getenv("SWITCHYARD_LISTEN"), os.Getenv("SWITCHYARD_LISTEN_PORT")); ok {
		os.Setenv("SWITCHYARD_LISTEN_PORT", port)
	}
}

// listenPort returns the port of listen when the environment has none of
// its own. A listen without a port leaves the Caddyfile's default.
func listenPort(listen, explicit string) (string, bool) {
	if listen == "" || explicit != "" {
		return "", false
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		return "", false
	}
	return port, true
}
