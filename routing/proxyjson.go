package routing

import (
	"encoding/json"
	"net"
	"regexp"
	"time"
)

// requestBufferBytes is net/http's write buffer of an upstream connection:
// a larger body does not fit in one write with its headers anyway.
const requestBufferBytes = 4096

// UpstreamJSON is the JSON config of the Caddy reverse_proxy handler
// that sends requests below prefix to one upstream base URL (scheme,
// host and basePath), with its dial and response header timeouts. It is
// built as JSON, as an operator would write it, so that it goes through
// reverse_proxy's own decoding and validation.
func UpstreamJSON(prefix, scheme, host, basePath string, dialTimeout, headerTimeout time.Duration) ([]byte, error) {
	dial := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		dial = net.JoinHostPort(host, port)
	}
	hostname, _, _ := net.SplitHostPort(dial)

	transport := map[string]any{
		// Caddy's http transport, its connections writing a body longer
		// than its write buffer through a pooled buffer where Caddy's
		// would make one as large as the body for each request
		// (caddymodules.HTTPTransport).
		"protocol":                "switchyard_http",
		"dial_timeout":            dialTimeout.String(),
		"response_header_timeout": headerTimeout.String(),
	}
	if scheme == "https" {
		transport["tls"] = map[string]any{"server_name": hostname}
	}
	cfg := map[string]any{
		"upstreams": []map[string]string{{"dial": dial}},
		"transport": transport,
		// reverse_proxy sends the headers of a request whose body it does
		// not hold in memory in a write of their own, then the body in
		// another; a small body it holds goes out with them in one. Most
		// bodies are in memory already (the meter read them), and a copy
		// of a few KiB costs less than a system call.
		"request_buffers": requestBufferBytes,
		// No header operations. Request ones would copy every header
		// of every request to apply them: switchyard_proxy sets the
		// upstream's Host and key itself (passthrough.UpstreamHeaders).
		// Response ones would lower-case every header name of every
		// answer anew to match their patterns: switchyard_proxy's header
		// filter passes only an allow-list of the upstream's headers and
		// keeps the gateway's own values of the names it set
		// (passthrough.HeaderFilter), so the upstream's rate-limit
		// headers, which describe the operator's account with the
		// backend, and its X-Request-Id never reach the client.
	}
	if basePath != prefix {
		cfg["rewrite"] = map[string]any{
			"path_regexp": []map[string]string{{"find": "^" + regexp.QuoteMeta(prefix), "replace": basePath}},
		}
	}
	return json.Marshal(cfg)
}
