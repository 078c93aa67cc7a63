package caddymodules

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/policy/limits"
)

func TestAdminSecret(t *testing.T) {
	repl := caddy.NewReplacer()
	t.Run("generated once in embedded mode", func(t *testing.T) {
		t.Setenv(envAdminJWTSecret, "")
		s := settings{dataDir: filepath.Join(t.TempDir(), "data")}
		first, err := s.adminSecret(repl, "")
		if err != nil || len(first) < 32 {
			t.Fatalf("adminSecret = %q, %v", first, err)
		}
		fi, err := os.Stat(filepath.Join(s.dataDir, adminSecretFile))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("secret file: %v, mode %v", err, fi.Mode())
		}
		again, err := s.adminSecret(repl, "")
		if err != nil || !bytes.Equal(first, again) {
			t.Errorf("second call = %q, %v; want the first secret", again, err)
		}
		key, _ := os.ReadFile(filepath.Join(s.dataDir, keySecretFile))
		if len(key) != 0 {
			t.Error("the admin secret touched the key secret")
		}
	})
	t.Run("configured wins over environment", func(t *testing.T) {
		t.Setenv(envAdminJWTSecret, strings.Repeat("e", 32))
		s := settings{dataDir: t.TempDir()}
		got, err := s.adminSecret(repl, strings.Repeat("c", 40))
		if err != nil || string(got) != strings.Repeat("c", 40) {
			t.Errorf("adminSecret = %q, %v", got, err)
		}
		got, err = s.adminSecret(repl, "")
		if err != nil || string(got) != strings.Repeat("e", 32) {
			t.Errorf("adminSecret from the environment = %q, %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(s.dataDir, adminSecretFile)); err == nil {
			t.Error("a configured secret still generated a file")
		}
	})
	t.Run("too short", func(t *testing.T) {
		t.Setenv(envAdminJWTSecret, "short")
		if _, err := (settings{dataDir: t.TempDir()}).adminSecret(repl, ""); err == nil {
			t.Error("a 5-character secret was accepted")
		}
	})
	t.Run("none with PostgreSQL", func(t *testing.T) {
		t.Setenv(envAdminJWTSecret, "")
		s := settings{dataDir: t.TempDir(), postgres: "postgres://x"}
		got, err := s.adminSecret(repl, "")
		if err != nil || got != nil {
			t.Errorf("adminSecret = %q, %v; want none", got, err)
		}
		a := &Admin{}
		if _, err := a.verifierConfig(s); !errors.Is(err, errAdminUnconfigured) {
			t.Errorf("verifierConfig without secret or JWKS: %v", err)
		}
		a.JWKSURL = "https://sso.example.com/jwks.json"
		if cfg, err := a.verifierConfig(s); err != nil || cfg.JWKS == nil || cfg.Secret != nil {
			t.Errorf("verifierConfig with a JWKS: %+v, %v", cfg, err)
		}
	})
}

func TestAdminValidate(t *testing.T) {
	for url, ok := range map[string]bool{
		"":                         true,
		"https://sso.example/jwks": true,
		"{env.JWKS}":               true,
		"ftp://sso.example/jwks":   false,
		"not a url":                false,
	} {
		if err := (&Admin{JWKSURL: url}).Validate(); (err == nil) != ok {
			t.Errorf("Validate(%q) = %v", url, err)
		}
	}
}

func TestAdminRateOptions(t *testing.T) {
	tests := []struct {
		name, in           string
		wantErr            bool
		token, addr        limits.Rate
		refusalIntervalSet bool
	}{
		{name: "defaults", in: `switchyard_admin`,
			token: admin.DefaultTokenRate, addr: admin.DefaultAddressRate},
		{name: "set", in: "switchyard_admin {\n rate_limit 10 10s\n address_rate_limit 50\n refusal_log_interval 5m\n}",
			token: limits.Rate{Limit: 10, Period: 10 * time.Second}, addr: limits.Rate{Limit: 50, Period: time.Minute}, refusalIntervalSet: true},
		{name: "off", in: "switchyard_admin {\n rate_limit off\n address_rate_limit off\n}",
			token: limits.Rate{Limit: 0, Period: time.Minute}, addr: limits.Rate{Limit: 0, Period: time.Minute}},
		{name: "zero", in: "switchyard_admin {\n rate_limit 0\n}", wantErr: true},
		{name: "not a number", in: "switchyard_admin {\n rate_limit many\n}", wantErr: true},
		{name: "bad period", in: "switchyard_admin {\n address_rate_limit 5 -1s\n}", wantErr: true},
		{name: "too many", in: "switchyard_admin {\n rate_limit 5 1m 2\n}", wantErr: true},
		{name: "no interval", in: "switchyard_admin {\n refusal_log_interval\n}", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Admin
			err := a.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("UnmarshalCaddyfile: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := adminRate(a.RateLimit, a.RateLimitPeriod, admin.DefaultTokenRate); got != tt.token {
				t.Errorf("token rate %+v, want %+v", got, tt.token)
			}
			if got := adminRate(a.AddressRateLimit, a.AddressRateLimitPeriod, admin.DefaultAddressRate); got != tt.addr {
				t.Errorf("address rate %+v, want %+v", got, tt.addr)
			}
			if (a.RefusalLogInterval != 0) != tt.refusalIntervalSet {
				t.Errorf("refusal_log_interval %v", a.RefusalLogInterval)
			}
		})
	}
}
