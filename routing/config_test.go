package routing

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
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
			err := ValidateModels(tt.models, tt.prices, func(s string) string { return s })
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestModelReverseProxyJSON(t *testing.T) {
	m := &Model{Name: "a", LBPolicy: "weighted_round_robin", HealthPath: "off"}
	ups := []Upstream{{Dial: "h:1", Weight: 3}, {Dial: "h:2", Weight: 1}, {Dial: "h:3", Weight: 1}}
	raw, err := m.ReverseProxyJSON(ups)
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

// Placeholders in an upstream's URL are replaced before it is checked.
func TestValidateModelsExpandsPlaceholders(t *testing.T) {
	models := []*Model{{Name: "a", Upstreams: []*ModelUpstream{{URL: "{env.UP}"}}}}
	expand := func(s string) string { return strings.ReplaceAll(s, "{env.UP}", "http://h:1/v1") }
	if err := ValidateModels(models, nil, expand); err != nil {
		t.Errorf("expanded: %v", err)
	}
	if err := ValidateModels(models, nil, func(s string) string { return s }); err == nil {
		t.Error("a URL left a placeholder passed")
	}
}
