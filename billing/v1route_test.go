package billing

import (
	"strings"
	"testing"
)

func TestCheckV1Route(t *testing.T) {
	for route, want := range map[string]string{
		"POST /chat/completions":     "",
		"GET /anything/*":            "",
		"post /chat/completions":     "want METHOD /path",
		"POST chat":                  "want METHOD /path",
		"POST /audio/transcriptions": "no meter reads its body",
	} {
		err := CheckV1Route(route)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("CheckV1Route(%q) = %v, want %q", route, err, want)
		}
	}
	// The refusal lists what is metered, so an operator sees the choice.
	if err := CheckV1Route("PUT /files"); err == nil || !strings.Contains(err.Error(), "POST /chat/completions") {
		t.Errorf("the refusal does not list the metered routes: %v", err)
	}
}
