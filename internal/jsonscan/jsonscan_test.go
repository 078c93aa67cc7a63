package jsonscan

import (
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // key=value pairs joined by |; "!" when not an object
	}{
		{name: "in order", in: ` { "b" : 1 , "a":[1,{"x":"}"}], "c":"q\"}" } `, want: `"b"=1|"a"=[1,{"x":"}"}]|"c"="q\"}"`},
		{name: "empty", in: `{}`, want: ``},
		{name: "escaped backslash before quote", in: `{"k":"a\\"}`, want: `"k"="a\\"`},
		{name: "array", in: `[1]`, want: `!`},
		{name: "unterminated", in: `{"k":"a`, want: `!`},
		{name: "missing colon", in: `{"k" 1}`, want: `!`},
		{name: "bare key", in: `{k:1}`, want: `!`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			ok := Members([]byte(tt.in), func(k, v []byte) bool {
				got = append(got, string(k)+"="+string(v))
				return true
			})
			g := strings.Join(got, "|")
			if !ok {
				g = "!"
			}
			if g != tt.want {
				t.Errorf("Members(%s) = %s, want %s", tt.in, g, tt.want)
			}
		})
	}
}

func TestMembersStopsWhenAsked(t *testing.T) {
	n := 0
	if Members([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false }) || n != 1 {
		t.Errorf("Members went on after f said stop: %d calls", n)
	}
}

func TestElements(t *testing.T) {
	var got []string
	if !Elements([]byte(`[ "a,]" , {"b":[2]}, 3 ]`), func(v []byte) bool { got = append(got, string(v)); return true }) {
		t.Fatal("Elements refused an array")
	}
	if g := strings.Join(got, "|"); g != `"a,]"|{"b":[2]}|3` {
		t.Errorf("Elements = %s", g)
	}
	if Elements([]byte(`{}`), func([]byte) bool { return true }) {
		t.Error("Elements accepted an object")
	}
}
