package files

import (
	"strings"
	"testing"
)

func TestSettingsValidate(t *testing.T) {
	for _, p := range []string{"", "fail_closed", "fail_open"} {
		if err := (&Settings{ScanPolicy: p}).Validate(); err != nil {
			t.Errorf("scan_policy %q: %v", p, err)
		}
	}
	if err := (&Settings{ScanPolicy: "fail_sideways"}).Validate(); err == nil || !strings.Contains(err.Error(), "unknown scan_policy") {
		t.Errorf("an unknown policy: %v", err)
	}
	if err := (*Settings)(nil).Validate(); err != nil {
		t.Errorf("nil: %v", err)
	}
}

func TestSettingsLocation(t *testing.T) {
	same := func(s string) string { return s }
	tests := []struct {
		name    string
		c       *Settings
		scratch bool
		want    string
		wantErr bool
	}{
		{name: "default", want: "/state/files"},
		{name: "a directory", c: &Settings{Blobs: "/srv/blobs"}, want: "/srv/blobs"},
		{name: "a directory when validating", c: &Settings{Blobs: "/srv/blobs"}, scratch: true, want: "/state/files"},
		{name: "a bucket when validating", c: &Settings{Blobs: "s3://bucket?region=x"}, scratch: true, want: "s3://bucket?region=x"},
		{name: "another scheme", c: &Settings{Blobs: "gs://bucket"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Location(same, "/state", tt.scratch)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Location = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSettingsApply(t *testing.T) {
	lookup := func(configured, env string) string {
		if configured != "" {
			return configured
		}
		return map[string]string{EnvClamd: "tcp://clamd:3310"}[env]
	}
	var cfg Config
	(*Settings)(nil).Apply(&cfg, lookup)
	if c, ok := cfg.Scanner.(*Clamd); !ok || c.Addr != "tcp://clamd:3310" || cfg.ScanFailOpen {
		t.Errorf("from the environment: %+v", cfg)
	}
	cfg = Config{}
	(&Settings{Clamd: "unix:///run/clamd.sock", ScanPolicy: "fail_open", Purposes: []string{"vision"}}).Apply(&cfg, lookup)
	if c, ok := cfg.Scanner.(*Clamd); !ok || c.Addr != "unix:///run/clamd.sock" || !cfg.ScanFailOpen || len(cfg.Purposes) != 1 {
		t.Errorf("configured: %+v", cfg)
	}
}
