package caddymodules

import (
	"context"

	"github.com/switchyardhq/switchyard/telemetry"
)

// The access log (Caddy's `log` directive, on in Caddyfile.example) gets
// a request's outcome as fields of its line: the request id, the key and
// account ids, the model asked for and the one that answered, the
// upstream, the tokens and price of its charge, and the error envelope's
// code. Never a key, a prompt or an answer: only ids, names the config
// gives and numbers. docs/operations.md lists the fields.

// lineFor is the access log line of ctx's request (requestState); outside
// a request Caddy logs, one that nothing writes.
func lineFor(ctx context.Context) *telemetry.LogLine {
	return &stateOf(ctx).line
}
