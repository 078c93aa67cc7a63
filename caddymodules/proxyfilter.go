package caddymodules

import (
	"net/http"

	"github.com/switchyardhq/switchyard/internal/httpstatus"
	"github.com/switchyardhq/switchyard/policy/passthrough"
)

// DefaultV1Routes are the /v1 routes passed upstream when a Proxy names
// none: what a chat client needs, and nothing that would share the
// operator's upstream account between tenants (files, batches, stored
// responses, fine-tunes). POST /responses creates a response without
// reading any stored one (billing.ParseResponses refuses what would).
var DefaultV1Routes = []string{
	"POST /chat/completions",
	"POST /completions",
	"POST /embeddings",
	"POST /responses",
	"GET /models",
	"GET /models/*",
}

// admitRoute normalises r's path below prefix and checks it against the
// allowed routes (passthrough.Route): a route not allowed is not found.
func admitRoute(r *http.Request, prefix string, routes []string) error {
	if !passthrough.Route(r, prefix, routes) {
		return httpstatus.NotServed(r)
	}
	return nil
}
