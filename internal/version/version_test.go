package version

import (
	"runtime/debug"
	"testing"
)

func TestString(t *testing.T) {
	defer func(s string) { stamped = s }(stamped)
	stamped = "v1.4.0-3-gabc1234-dirty"
	if got := String(); got != "v1.4.0-3-gabc1234-dirty" {
		t.Errorf("String() = %q with a stamped version", got)
	}
}

func TestRecorded(t *testing.T) {
	cases := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{name: "tag", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, ok: true, want: "v1.2.3"},
		{name: "devel", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ok: true, want: "devel"},
		{name: "empty", info: &debug.BuildInfo{}, ok: true, want: "devel"},
		{name: "no build info", ok: false, want: "devel"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := recorded(tc.info, tc.ok); got != tc.want {
				t.Errorf("recorded = %q, want %q", got, tc.want)
			}
		})
	}
}
