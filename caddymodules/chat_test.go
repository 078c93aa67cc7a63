package caddymodules

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/translator/request"
)

// An open stream must not keep the request body and its parse in the
// request's state and vars; the metrics still read the model after the
// handler, from the state.
func TestLetGoOfBodyKeepsOnlyTheModel(t *testing.T) {
	vars := map[string]any{}
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, vars)
	r := httptest.NewRequest(http.MethodPost, chatPath, nil).WithContext(ctx)
	req := &request.Request{Model: "m", Messages: []request.Message{{Role: request.RoleUser}}}
	stateOf(ctx).body = []byte(`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
	caddyhttp.SetVar(ctx, chatRequestVar, req)

	letGoOfBody(r, req)

	if stateOf(ctx).body != nil {
		t.Error("the request body is still held in the request's state")
	}
	if kept, ok := vars[chatRequestVar]; ok {
		t.Errorf("the request's vars still hold the parse: %+v", kept)
	}
	if got := requestedModel(r); got != "m" {
		t.Errorf("requestedModel = %q, want %q", got, "m")
	}
	if len(req.Messages) != 1 {
		t.Errorf("the handler's own parse lost its messages: %+v", req.Messages)
	}
}
