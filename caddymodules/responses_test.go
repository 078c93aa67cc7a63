package caddymodules

import (
	"net/http/httptest"
	"testing"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// A proxy that serves POST /responses makes the admission step read that
// path as a Responses body; one that does not leaves it a /v1 JSON body
// (refused by the proxy's route table anyway).
func TestProxyRegistersItsResponsesRoute(t *testing.T) {
	a := newAdmission(&limits.Config{})
	(&Proxy{Prefix: "/v1", Routes: DefaultV1Routes}).registerResponses(a)
	(&Proxy{Prefix: "/legacy", Routes: []string{"POST /chat/completions"}}).registerResponses(a)
	for _, tt := range []struct {
		path string
		want billing.BodyMeter
	}{
		{"/v1/responses", billing.V1Responses},
		{"/v1/chat/completions", billing.V1JSON},
		{"/legacy/responses", billing.V1JSON},
	} {
		r := httptest.NewRequest("POST", tt.path, nil)
		if got := a.routes.Load().BodyMeter(r.Method, r.URL.Path); got != tt.want {
			t.Errorf("%s: meter %v, want %v", tt.path, got, tt.want)
		}
		parsed, err := a.v1ParseOf(r)([]byte(`{"model":"m","stream":true,"input":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		if parsed.Responses != (tt.want == billing.V1Responses) || parsed.DropUsage == parsed.Responses {
			t.Errorf("%s: parsed as %+v", tt.path, parsed)
		}
	}
}
