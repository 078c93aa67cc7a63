package fonts

import "testing"

func TestShapeArabic(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// beh alone, then beh-alef: initial beh, final alef.
		{"ب", "\uFE8F"},
		{"با", "\uFE91\uFE8E"},
		// meem, reh, hah, beh, alef: reh joins only to its right, so
		// the hah after it starts again.
		{"مرحبا", "\uFEE3\uFEAE\uFEA3\uFE92\uFE8E"},
		// lam alef is one ligature.
		{"لا", "\uFEFB"},
		{"سلام", "\uFEB3\uFEFC\uFEE1"},
		{"Latin stays", "Latin stays"},
	} {
		if got := ShapeArabic(c.in); got != c.want {
			t.Errorf("ShapeArabic(%q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}

func TestReorder(t *testing.T) {
	for _, c := range []struct {
		in   string
		rtl  bool
		want string
	}{
		{"plain text", false, "plain text"},
		{"Hello שלום world", false, "Hello םולש world"},
		{"שלום 123 world (כן).", true, ".(ןכ) world 123 םולש"},
		// A mark stays after its letter.
		{"שָׁלוֹם", true, "םוֹלשָׁ"},
	} {
		rs, order := Reorder(c.in, c.rtl)
		if string(rs) != c.want {
			t.Errorf("Reorder(%q) = %q, want %q", c.in, string(rs), c.want)
		}
		src := []rune(c.in)
		for i, k := range order {
			if src[k] != rs[i] && mirror[src[k]] != rs[i] {
				t.Errorf("Reorder(%q): order[%d] = %d points at %q, shown %q", c.in, i, k, src[k], rs[i])
			}
		}
	}
}

func TestBaseRTL(t *testing.T) {
	if !BaseRTL("123 שלום abc") || BaseRTL("abc שלום") || BaseRTL("123") {
		t.Error("BaseRTL decides by the first strong letter")
	}
}
