package request

import "testing"

// Text joins every text part with a line break, empty ones too, and
// skips the others.
func TestMessageText(t *testing.T) {
	text := func(s string) Part { return Part{Kind: PartText, Text: s} }
	image := Part{Kind: PartImage}
	for _, tt := range []struct {
		parts []Part
		want  string
	}{
		{nil, ""},
		{[]Part{image}, ""},
		{[]Part{text("hi")}, "hi"},
		{[]Part{image, text("hi"), image}, "hi"},
		{[]Part{text("a"), image, text("b")}, "a\nb"},
		{[]Part{text(""), text("b")}, "\nb"},
		{[]Part{text("a"), text("")}, "a\n"},
		{[]Part{text(""), text("")}, "\n"},
	} {
		if got := (Message{Parts: tt.parts}).Text(); got != tt.want {
			t.Errorf("Text of %v = %q, want %q", tt.parts, got, tt.want)
		}
	}
}
