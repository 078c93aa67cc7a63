package limits

import "testing"

func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"203.0.113.7:40000":          "203.0.113.7",
		"[::ffff:203.0.113.7]:40000": "203.0.113.7",
		"[2001:db8:1:2:3::9]:40000":  "2001:db8:1:2::/64",
		"not an address":             "not an address",
	} {
		if got := ClientAddr("", remote); got != want {
			t.Errorf("ClientAddr(%q) = %q, want %q", remote, got, want)
		}
	}
	if got := ClientAddr("2001:db8:1:2:3::9", "198.51.100.1:1"); got != "2001:db8:1:2::/64" {
		t.Errorf("the client IP of a trusted proxy is not preferred: %q", got)
	}
}
