package caddymodules

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

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
