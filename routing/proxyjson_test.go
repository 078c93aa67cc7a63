package routing

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestUpstreamJSON(t *testing.T) {
	tests := []struct {
		name                   string
		scheme, host, basePath string
		want                   []string // substrings of the JSON
		not                    []string
	}{
		{
			name: "plain http at /v1", scheme: "http", host: "127.0.0.1:8000", basePath: "/v1",
			want: []string{`"dial":"127.0.0.1:8000"`},
			// Caddy flushes event streams and bodies of unknown length
			// itself; a fixed interval would flush JSON answers too.
			// Header operations would copy every request's
			// headers, or match every answer's (UpstreamJSON).
			not: []string{`"flush_interval"`, `rewrite`, `tls`, `"headers"`, `Authorization`},
		},
		{
			name: "https at another base path", scheme: "https", host: "api.example.com", basePath: "/openai/v1",
			want: []string{`"dial":"api.example.com:443"`, `"server_name":"api.example.com"`,
				`"find":"^/v1"`, `"replace":"/openai/v1"`},
			not: []string{`"request"`, `Authorization`},
		},
		{
			name: "root base path", scheme: "http", host: "ollama:11434", basePath: "",
			want: []string{`"dial":"ollama:11434"`, `"replace":""`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := UpstreamJSON("/v1", tt.scheme, tt.host, tt.basePath, time.Second, time.Minute)
			if err != nil || !json.Valid(b) {
				t.Fatalf("config %s, err %v", b, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("missing %s in %s", w, b)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(b), n) {
					t.Errorf("unexpected %s in %s", n, b)
				}
			}
		})
	}
}
