package routing

import "time"

// Defaults of an upstream's timeouts, switchyard_proxy's and a model's
// pool's alike.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultResponseHeaderTimeout = 120 * time.Second
	DefaultStreamIdleTimeout     = 120 * time.Second
)

// Timeouts bound the transport's waits for an upstream, and (Idle) the
// relay of its answer once it has started.
type Timeouts struct{ Dial, ResponseHeader, Idle time.Duration }

// OrDefaults is t with each bound that is not positive replaced by its
// default.
func (t Timeouts) OrDefaults() Timeouts {
	return Timeouts{
		Dial:           orDuration(t.Dial, DefaultDialTimeout),
		ResponseHeader: orDuration(t.ResponseHeader, DefaultResponseHeaderTimeout),
		Idle:           orDuration(t.Idle, DefaultStreamIdleTimeout),
	}
}
