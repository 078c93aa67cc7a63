package duration

import (
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// Durations read here and by Caddy's own type are the same, value and
// error alike, so that moving a config field from one to the other
// changes nothing an operator wrote.
func TestReadsAsCaddyDoes(t *testing.T) {
	for _, in := range []string{
		`"300ms"`, `"1.5h"`, `"2d"`, `"1d12h"`, `"0.5d"`, `"-1d"`, `"+2d3m"`, `"1e3s"`, `"d"`, `"1dd"`,
		`"10"`, `""`, `"1x"`, `1500000000`, `-5`, `1.5`, `null`, `true`, `"` + string(make([]byte, 1025)) + `"`,
	} {
		var ours Duration
		var theirs caddy.Duration
		errOurs := json.Unmarshal([]byte(in), &ours)
		errTheirs := json.Unmarshal([]byte(in), &theirs)
		if (errOurs == nil) != (errTheirs == nil) || ours != Duration(theirs) {
			t.Errorf("%.40s: got %v (%v), Caddy reads %v (%v)", in, ours, errOurs, theirs, errTheirs)
		}
		if errOurs == nil && errTheirs == nil {
			a, _ := json.Marshal(ours)
			b, _ := json.Marshal(theirs)
			if string(a) != string(b) {
				t.Errorf("%s encodes as %s, Caddy's as %s", in, a, b)
			}
		}
	}
}

func TestParseDays(t *testing.T) {
	got, err := Parse("1d2h")
	if err != nil || got.Hours() != 26 {
		t.Errorf(`Parse("1d2h") = %v, %v; want 26h`, got, err)
	}
}
