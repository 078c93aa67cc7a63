package clip

import "testing"

func TestClip(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		n            int
		runes, ellip string
	}{
		{name: "short stays", in: "abc", n: 5, runes: "abc", ellip: "abc"},
		{name: "exact stays", in: "abc", n: 3, runes: "abc", ellip: "abc"},
		{name: "cut at runes", in: "héllo", n: 2, runes: "hé", ellip: "hé…"},
		{name: "zero", in: "abc", n: 0, runes: "", ellip: "…"},
		{name: "wide runes", in: "日本語テキスト", n: 3, runes: "日本語", ellip: "日本語…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Runes(tt.in, tt.n); got != tt.runes {
				t.Errorf("Runes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.runes)
			}
			if got := Ellipsis(tt.in, tt.n); got != tt.ellip {
				t.Errorf("Ellipsis(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.ellip)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	cases := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{name: "between runes", s: "héllo", n: 3, want: "hé"},
		{name: "inside a rune", s: "héllo", n: 2, want: "h"},
		{name: "past the end", s: "héllo", n: 99, want: "héllo"},
		{name: "zero", s: "héllo", n: 0, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bytes(tc.s, tc.n); got != tc.want {
				t.Errorf("Bytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}
