package node

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdminSecret(t *testing.T) {
	repl := func(s string) string { return s }
	t.Run("generated once in embedded mode", func(t *testing.T) {
		t.Setenv(EnvAdminJWTSecret, "")
		s := Settings{DataDir: filepath.Join(t.TempDir(), "data")}
		first, err := s.AdminSecret(repl, "")
		if err != nil || len(first) < 32 {
			t.Fatalf("AdminSecret = %q, %v", first, err)
		}
		fi, err := os.Stat(filepath.Join(s.DataDir, adminSecretFile))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("secret file: %v, mode %v", err, fi.Mode())
		}
		again, err := s.AdminSecret(repl, "")
		if err != nil || !bytes.Equal(first, again) {
			t.Errorf("second call = %q, %v; want the first secret", again, err)
		}
		key, _ := os.ReadFile(filepath.Join(s.DataDir, keySecretFile))
		if len(key) != 0 {
			t.Error("the admin secret touched the key secret")
		}
	})
	t.Run("configured wins over environment", func(t *testing.T) {
		t.Setenv(EnvAdminJWTSecret, strings.Repeat("e", 32))
		s := Settings{DataDir: t.TempDir()}
		got, err := s.AdminSecret(repl, strings.Repeat("c", 40))
		if err != nil || string(got) != strings.Repeat("c", 40) {
			t.Errorf("AdminSecret = %q, %v", got, err)
		}
		got, err = s.AdminSecret(repl, "")
		if err != nil || string(got) != strings.Repeat("e", 32) {
			t.Errorf("AdminSecret from the environment = %q, %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(s.DataDir, adminSecretFile)); err == nil {
			t.Error("a configured secret still generated a file")
		}
	})
	t.Run("too short", func(t *testing.T) {
		t.Setenv(EnvAdminJWTSecret, "short")
		if _, err := (Settings{DataDir: t.TempDir()}).AdminSecret(repl, ""); err == nil {
			t.Error("a 5-character secret was accepted")
		}
	})
	t.Run("none with PostgreSQL", func(t *testing.T) {
		t.Setenv(EnvAdminJWTSecret, "")
		s := Settings{DataDir: t.TempDir(), Postgres: "postgres://x"}
		got, err := s.AdminSecret(repl, "")
		if err != nil || got != nil {
			t.Errorf("AdminSecret = %q, %v; want none", got, err)
		}
		var v AdminVerifier
		if _, err := s.VerifierConfig(v, repl); !errors.Is(err, ErrAdminUnconfigured) {
			t.Errorf("VerifierConfig without secret or JWKS: %v", err)
		}
		v.JWKSURL = "https://sso.example.com/jwks.json"
		if cfg, err := s.VerifierConfig(v, repl); err != nil || cfg.JWKS == nil || cfg.Secret != nil {
			t.Errorf("VerifierConfig with a JWKS: %+v, %v", cfg, err)
		}
	})
}

func TestAdminVerifierValidate(t *testing.T) {
	for url, ok := range map[string]bool{
		"":                         true,
		"https://sso.example/jwks": true,
		"{env.JWKS}":               true,
		"ftp://sso.example/jwks":   false,
		"not a url":                false,
	} {
		if err := (AdminVerifier{JWKSURL: url}).Validate(); (err == nil) != ok {
			t.Errorf("Validate(%q) = %v", url, err)
		}
	}
}
