package caddymodules

import "testing"

func TestListenPort(t *testing.T) {
	for _, tc := range []struct {
		listen, explicit, want string
		ok                     bool
	}{
		{"127.0.0.1:8080", "", "8080", true},
		{"0.0.0.0:9000", "", "9000", true},
		{"[::]:8443", "", "8443", true},
		{":7000", "", "7000", true},
		{"127.0.0.1:8080", "9090", "", false}, // set by hand: kept
		{"", "", "", false},
		{"localhost", "", "", false}, // no port: the Caddyfile's default
	} {
		got, ok := listenPort(tc.listen, tc.explicit)
		if got != tc.want || ok != tc.ok {
			t.Errorf("listenPort(%q, %q) = %q, %v; want %q, %v", tc.listen, tc.explicit, got, ok, tc.want, tc.ok)
		}
	}
}
