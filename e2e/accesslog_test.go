package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// TestAccessLogCarriesTheOutcome runs the shipped Caddyfile.example, whose
// access log is on, and finds in each request's line its request id, the
// model, the tokens and price of its charge, the upstream and the error
// code, and neither the key nor the prompt.
func TestAccessLogCarriesTheOutcome(t *testing.T) {
	const prompt = "PROMPT-al3-private"
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "logged")
	broke := newKey(t, e, "broke")
	g := startGateway(t, e, filepath.Join(repoRoot, "Caddyfile.example"))

	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: &demobackend.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}})
	body := strings.Replace(chatBody, `"hi"`, `"`+prompt+`"`, 1)
	status, h, out := g.do("POST", "/v1/chat/completions", key, body, "X-Request-Id", "req-al-1")
	if status != 200 || h.Get("X-Request-Id") != "req-al-1" {
		t.Fatalf("%d %s", status, out)
	}
	if status, _, out := g.do("POST", "/v1/chat/completions", broke, body, "X-Request-Id", "req-al-2"); status != 402 {
		t.Fatalf("a broke account: %d %s", status, out)
	}

	lines := accessLines(t, g, 2)
	ok := lines["req-al-1"]
	for field, want := range map[string]any{
		"model": "m", "model_served": "m", "prompt_tokens": 1000.0, "completion_tokens": 500.0,
		"usage_estimated": false, "status": 200.0,
	} {
		if ok[field] != want {
			t.Errorf("the charged request's %s is %v, want %v\n%v", field, ok[field], want, ok)
		}
	}
	if c, _ := ok["cost_cents"].(float64); c <= 0 {
		t.Errorf("the charged request's cost_cents is %v", ok["cost_cents"])
	}
	for _, field := range []string{"upstream", "key_id", "account_id", "charge_id"} {
		if s, _ := ok[field].(string); s == "" {
			t.Errorf("the charged request has no %s\n%v", field, ok)
		}
	}
	if _, has := ok["error_code"]; has {
		t.Errorf("a success has an error_code: %v", ok["error_code"])
	}
	refused := lines["req-al-2"]
	if refused["error_code"] != "insufficient_balance" || refused["status"] != 402.0 || refused["request_id"] != "req-al-2" {
		t.Errorf("the refused request's line: %v", refused)
	}
	if _, has := refused["cost_cents"]; has {
		t.Errorf("a refused request has a cost: %v", refused)
	}
	logs := g.log.String()
	for what, s := range map[string]string{"the key": key[len(key)-20:], "the prompt": prompt} {
		if strings.Contains(logs, s) {
			t.Errorf("the log carries %s", what)
		}
	}
}

// accessLines waits for n access log lines with a request_id and returns
// them by request id.
func accessLines(t *testing.T, g *gateway, n int) map[string]map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := map[string]map[string]any{}
		for _, line := range strings.Split(g.log.String(), "\n") {
			if !strings.Contains(line, `"http.log.access`) {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("an access log line is not JSON: %v\n%s", err, line)
			}
			if id, _ := v["request_id"].(string); id != "" {
				out[id] = v
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d access log lines with a request_id, want %d:\n%s", len(out), n, g.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
