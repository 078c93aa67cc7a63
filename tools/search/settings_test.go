package search

import "testing"

func TestSettingsConfig(t *testing.T) {
	lookup := func(configured, env string) string {
		if configured != "" {
			return configured
		}
		return map[string]string{EnvSearchURL: "http://searx:8080", EnvTavilyKey: "tv"}[env]
	}
	got := (&Settings{BraveKey: "br"}).Config(lookup)
	if got.SearxNGURL != "http://searx:8080" || got.BraveKey != "br" || got.TavilyKey != "tv" {
		t.Errorf("Config = %+v", got)
	}
	if got := (*Settings)(nil).Config(func(string, string) string { return "" }); got.SearxNGURL != "" || got.BraveKey != "" {
		t.Errorf("nothing configured: %+v", got)
	}
}
