package caddymodules

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
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
