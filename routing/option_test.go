package routing

import (
	"errors"
	"testing"
	"time"
)

func TestModelSetOption(t *testing.T) {
	var m Model
	for _, o := range [][]string{
		{"unhealthy_status", "none"}, {"retries", "0"}, {"dial_timeout", "2s"}, {"fallback", "b", "c"}, {"lb_policy", "first"},
	} {
		if err := m.SetOption(o[0], o[1:]); err != nil {
			t.Fatalf("%v: %v", o, err)
		}
	}
	if m.UnhealthyStatus == nil || len(*m.UnhealthyStatus) != 0 || m.Retries == nil || *m.Retries != 0 ||
		time.Duration(m.DialTimeout) != 2*time.Second || len(m.Fallbacks) != 2 || m.LBPolicy != "first" {
		t.Errorf("options read as %+v", m)
	}
	if err := m.SetOption("unhealthy_status", []string{"5xx", "429"}); err != nil || len(*m.UnhealthyStatus) != 2 || (*m.UnhealthyStatus)[0] != 5 {
		t.Errorf("unhealthy_status 5xx 429: %v, %v", err, *m.UnhealthyStatus)
	}
	for _, tt := range []struct {
		opt  string
		args []string
		want error
	}{
		{"colour", []string{"blue"}, ErrUnknownOption},
		{"upstream", []string{"http://h/v1"}, ErrUnknownOption}, // the adapter's
		{"lb_policy", []string{"a", "b"}, ErrArgCount},
		{"price", []string{"1"}, ErrArgCount},
	} {
		if err := new(Model).SetOption(tt.opt, tt.args); !errors.Is(err, tt.want) {
			t.Errorf("%s %v: %v, want %v", tt.opt, tt.args, err, tt.want)
		}
	}
	if err := new(Model).SetOption("health_interval", []string{"0s"}); err == nil {
		t.Error("a zero interval passed")
	}
}
