package caddymodules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/routing"
)

func TestValidateModels(t *testing.T) {
	up := func(url string) []*ModelUpstream { return []*ModelUpstream{{URL: url}} }
	neg := -1
	tests := []struct {
		name   string
		models []*Model
		prices map[string]policy.ModelPrice
		want   string // "" is valid
	}{
		{"valid", []*Model{{Name: "a", Upstreams: up("http://h:1/v1"), Fallbacks: []string{"b"}}, {Name: "b", Upstreams: up("https://h/v1")}}, nil, ""},
		{"no name", []*Model{{Upstreams: up("http://h/v1")}}, nil, "needs a name"},
		{"twice", []*Model{{Name: "a", Upstreams: up("http://h/v1")}, {Name: "a", Upstreams: up("http://h/v1")}}, nil, "configured twice"},
		{"no upstream", []*Model{{Name: "a"}}, nil, "at least one upstream"},
		{"bad url", []*Model{{Name: "a", Upstreams: up("ftp://h/v1")}}, nil, "want an http(s) base URL"},
		{"same upstream twice", []*Model{{Name: "a", Upstreams: []*ModelUpstream{{URL: "http://h:1/v1"}, {URL: "http://h:1/v2"}}}}, nil, "distinct names"},
		{"unknown policy", []*Model{{Name: "a", Upstreams: up("http://h/v1"), LBPolicy: "cookie"}}, nil, "lb_policy"},
		{"negative retries", []*Model{{Name: "a", Upstreams: up("http://h/v1"), Retries: &neg}}, nil, "retries"},
		{"health path", []*Model{{Name: "a", Upstreams: up("http://h/v1"), HealthPath: "models"}}, nil, "health_path"},
		{"bad status", []*Model{{Name: "a", Upstreams: up("http://h/v1"), UnhealthyStatus: &[]int{42}}}, nil, "unhealthy_status"},
		{"unknown fallback", []*Model{{Name: "a", Upstreams: up("http://h/v1"), Fallbacks: []string{"z"}}}, nil, "not a configured model"},
		{"self fallback", []*Model{{Name: "a", Upstreams: up("http://h/v1"), Fallbacks: []string{"a"}}}, nil, "itself"},
		{"priced twice", []*Model{{Name: "a", Upstreams: up("http://h/v1"), Price: &policy.ModelPrice{}}}, map[string]policy.ModelPrice{"a": {}}, "priced both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateModels(tt.models, tt.prices)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestModelCaddyfileErrors(t *testing.T) {
	tests := []struct{ input, want string }{
		{"model {\n}", "wrong argument count"},
		{"model a {\n\tupstream\n}", "wrong argument count"},
		{"model a {\n\tcolour blue\n}", `unrecognized model option "colour"`},
		{"model a {\n\tupstream http://h/v1 {\n\t\tcolour blue\n\t}\n}", `unrecognized model upstream option "colour"`},
		{"model a {\n\tprice 1\n}", "wrong argument count"},
		{"model a {\n\thealth_interval soon\n}", "want a positive duration"},
		{"model a {\n\tretries many\n}", "want a whole number"},
		{"model a {\n\tunhealthy_status bad\n}", "unhealthy_status"},
		{"model a {\n\tupstream http://h/v1 {\n\t\tweight 0\n\t}\n}", "weight"},
	}
	for _, tt := range tests {
		d := caddyfile.NewTestDispenser(tt.input)
		d.Next()
		_, err := unmarshalModel(d)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.input, err, tt.want)
		}
	}
}

func TestPoolHandlerConfig(t *testing.T) {
	m := &Model{Name: "a", LBPolicy: "weighted_round_robin", HealthPath: "off"}
	ups := []routing.Upstream{{Dial: "h:1", Weight: 3}, {Dial: "h:2", Weight: 1}, {Dial: "h:3", Weight: 1}}
	raw, err := poolHandlerConfig(m, ups)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		LB struct {
			Policy struct {
				Policy  string `json:"policy"`
				Weights []int  `json:"weights"`
			} `json:"selection_policy"`
			Retries    int              `json:"retries"`
			RetryMatch []map[string]any `json:"retry_match"`
		} `json:"load_balancing"`
		Health map[string]json.RawMessage `json:"health_checks"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.LB.Policy.Policy != "weighted_round_robin" || len(cfg.LB.Policy.Weights) != 3 || cfg.LB.Policy.Weights[0] != 3 {
		t.Errorf("selection policy %+v", cfg.LB.Policy)
	}
	if cfg.LB.Retries != 2 {
		t.Errorf("retries %d, want one per other upstream", cfg.LB.Retries)
	}
	if len(cfg.LB.RetryMatch) != 2 || cfg.LB.RetryMatch[1]["expression"] != retryStatusExpr {
		t.Errorf("retry_match %v", cfg.LB.RetryMatch)
	}
	if _, ok := cfg.Health["active"]; ok {
		t.Errorf("health_path off still configured an active check")
	}
}
