package openurl

import "testing"

func TestSettingsAllowed(t *testing.T) {
	lookup := func(configured, env string) string {
		if configured == "{env.NET}" {
			return "10.1.0.0/16"
		}
		if configured != "" {
			return configured
		}
		return map[string]string{EnvAllow: "192.168.0.0/16"}[env]
	}
	got, err := (*Settings)(nil).Allowed(lookup)
	if err != nil || len(got) != 1 || got[0].String() != "192.168.0.0/16" {
		t.Errorf("from the environment: %v, %v", got, err)
	}
	got, err = (&Settings{Allow: []string{"{env.NET}", "fd12::/48"}}).Allowed(lookup)
	if err != nil || len(got) != 2 || got[0].String() != "10.1.0.0/16" {
		t.Errorf("configured: %v, %v", got, err)
	}
	if _, err := (&Settings{Allow: []string{"nowhere"}}).Allowed(lookup); err == nil {
		t.Error("a prefix that is not one passed")
	}
}
