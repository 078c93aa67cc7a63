package translator

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// BenchmarkPrepare is what a /v3 request allocates while it is set up,
// from its parse to its conversation encoded for the backend, with every
// tool registered: the garbage of a request's set-up stays resident in a
// process that holds many idle streams (docs/performance.md, "Memory of
// an idle stream").
func BenchmarkPrepare(b *testing.B) {
	up, err := upstream.New(upstream.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "backend-model"})
	if err != nil {
		b.Fatal(err)
	}
	o, prof := benchOrchestrator(b, up)
	for _, bc := range []struct{ name, body string }{
		{"short", chatBody(true, "Hold on.", "")},
		{"link", chatBody(true, "What does https://example.com/a say?", `"modalities":["text","files"]`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req, err := request.Parse([]byte(bc.body), http.Header{}, request.Limits{Profile: prof})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				t := o.newTurn(req, Caller{AccountID: "acct1", KeyID: "key1", RequestID: "req1"})
				if err := t.prepare(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchOrchestrator is an orchestrator on up with every tool registered
// (fakes that run nothing) under Revision B's profile, as the gateway
// offers them, for the set-up benchmarks.
func benchOrchestrator(b *testing.B, up *upstream.Client) (*Orchestrator, policy.Profile) {
	b.Helper()
	reg := &tools.Registry{}
	for name, c := range map[string]tools.Capability{
		tools.NameWebSearch: tools.WebSearch, tools.NameOpenURL: tools.OpenURL,
		tools.NameCreateDocument: tools.FileOutput, tools.NameCreateChart: tools.FileOutput,
		tools.NameUpdateObject: tools.FileOutput, tools.NameDeleteObject: tools.FileOutput,
		tools.NameRemember: tools.EndUserMemory,
	} {
		if err := reg.Register(c, &fakeTool{name: name}); err != nil {
			b.Fatal(err)
		}
	}
	prof := policy.ProfileFor(policy.RevisionB)
	o, err := New(Config{Upstream: up, Profile: prof, Tools: reg, Memory: &fakeMemory{}})
	if err != nil {
		b.Fatal(err)
	}
	return o, prof
}
