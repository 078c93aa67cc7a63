package configcheck

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	check := URL("http://127.0.0.1:8000/v1", "http", "https")
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"http://10.0.0.7:8000/v1", true},
		{"HTTPS://api.example.com", true},
		{"localhost:8000/v1", false},
		{"http:///v1", false},
		{"ftp://host/", false},
		{"://", false},
	} {
		if err := check(tc.in); (err == nil) != tc.ok {
			t.Errorf("URL(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
	if err := URL("redis://host:6379/0", "redis", "unix")("unix:///run/redis.sock"); err != nil {
		t.Errorf("a unix socket URL has no host and is fine: %v", err)
	}
}

func TestPostgresDSNNeverRepeatsThePassword(t *testing.T) {
	if err := PostgresDSN("host=db dbname=gw"); err != nil {
		t.Errorf("keyword=value pairs: %v", err)
	}
	if err := PostgresDSN("postgres://u:pw@db:5432/gw"); err != nil {
		t.Errorf("a postgres URL: %v", err)
	}
	err := PostgresDSN("mysql://u:hunter2@db/gw")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a mysql URL: %v", err)
	}
}

func TestLiteralLeavesPlaceholdersToLoad(t *testing.T) {
	fail := func(string) error { return errTest }
	if err := Literal("{env.UPSTREAM}", fail); err != nil {
		t.Errorf("a placeholder was checked at adapt: %v", err)
	}
	if err := Literal("plain", fail); err != errTest {
		t.Errorf("a literal was not checked: %v", err)
	}
}

var errTest = errorString("bad")

type errorString string

func (e errorString) Error() string { return string(e) }
