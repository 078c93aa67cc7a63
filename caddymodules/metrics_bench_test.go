package caddymodules

import (
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// BenchmarkCaddyMetricsOnV1 is BenchmarkV1JSON with Caddy's own HTTP
// server metrics (the global `metrics` option) on, as Caddyfile.example
// ships, and off: what they cost a /v1 request, on the gateway and on a
// plain reverse_proxy site beside it. Switchyard's own metrics are on in
// both.
//
//	go test ./caddymodules -run '^$' -bench CaddyMetricsOnV1 -benchmem
func BenchmarkCaddyMetricsOnV1(b *testing.B) {
	discardStderr(b)
	upAddr := drainingUpstream(b)
	example, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		b.Fatal(err)
	}
	plainPort := setV1BenchEnv(b, upAddr)
	key := ""
	for _, metrics := range []string{"on", "off"} {
		cfg := string(example)
		if metrics == "off" {
			cfg = withoutCaddyMetrics(b, cfg)
		}
		plain, gateway := loadV1BenchConfig(b, cfg, benchLimits, upAddr, plainPort)
		if key == "" {
			key = fundedKey(b, "bench")
		}
		for _, c := range []struct {
			name string
			srv  *caddyhttp.Server
		}{{"plain", plain}, {"switchyard", gateway}} {
			b.Run(c.name+"/caddy-metrics="+metrics, func(b *testing.B) { benchServe(b, c.srv, key, 1) })
		}
	}
}

// withoutCaddyMetrics is the Caddyfile cfg without its global `metrics`
// option.
func withoutCaddyMetrics(b *testing.B, cfg string) string {
	b.Helper()
	out := strings.Replace(cfg, "\n\tmetrics\n", "\n", 1)
	if out == cfg {
		b.Fatal("Caddyfile.example has no global metrics option to take out")
	}
	return out
}
