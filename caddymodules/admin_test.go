package caddymodules

import (
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/policy/limits"
)

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
			if got := admin.RateOf(a.RateLimit, time.Duration(a.RateLimitPeriod), admin.DefaultTokenRate); got != tt.token {
				t.Errorf("token rate %+v, want %+v", got, tt.token)
			}
			if got := admin.RateOf(a.AddressRateLimit, time.Duration(a.AddressRateLimitPeriod), admin.DefaultAddressRate); got != tt.addr {
				t.Errorf("address rate %+v, want %+v", got, tt.addr)
			}
			if (a.RefusalLogInterval != 0) != tt.refusalIntervalSet {
				t.Errorf("refusal_log_interval %v", a.RefusalLogInterval)
			}
		})
	}
}
