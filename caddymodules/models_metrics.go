package caddymodules

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/telemetry"
)

// registerPoolCollector registers the health gauges of ps's upstreams,
// as reverse_proxy sees them, on reg.
func registerPoolCollector(reg prometheus.Registerer, ps *pools) error {
	return telemetry.RegisterUpstreamCollector(reg, func(yield func(telemetry.UpstreamState)) {
		for _, p := range ps.table.Pools() {
			for i, u := range p.rp.Upstreams {
				yield(telemetry.UpstreamState{Model: p.name, Upstream: p.ups[i].Name, Healthy: u.Healthy(), InFlight: u.NumRequests()})
			}
		}
	})
}
