package upstream

import (
	"strings"
	"testing"
)

func TestThinkSplitter(t *testing.T) {
	cases := []struct {
		name          string
		input         string
		wantContent   string
		wantReasoning string
	}{
		{name: "no block", input: "Hello world", wantContent: "Hello world"},
		{name: "leading block", input: "<think>plan it</think>\n\nAnswer.", wantContent: "Answer.", wantReasoning: "plan it"},
		{name: "whitespace before block", input: "\n <think>x</think>A", wantContent: "A", wantReasoning: "x"},
		{name: "tag later is quoted text", input: "Use <think> tags like <think>this</think>.", wantContent: "Use <think> tags like <think>this</think>."},
		{name: "unterminated block", input: "<think>still thinking", wantReasoning: "still thinking"},
		{name: "almost a tag", input: "<thin air", wantContent: "<thin air"},
		{name: "only whitespace", input: "  \n", wantContent: "  \n"},
		{name: "close tag prefix inside reasoning", input: "<think>a </thi b</think>c", wantContent: "c", wantReasoning: "a </thi b"},
		{name: "lt in answer", input: "<think>r</think>1 < 2", wantContent: "1 < 2", wantReasoning: "r"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Every split of the input into pieces, down to single bytes,
			// must give the same result.
			for size := 1; size <= len(tc.input)+1; size++ {
				var ts thinkSplitter
				var content, reasoning strings.Builder
				for i := 0; i < len(tc.input); i += size {
					c, r := ts.split(tc.input[i:min(i+size, len(tc.input))])
					content.WriteString(c)
					reasoning.WriteString(r)
				}
				c, r := ts.flush()
				content.WriteString(c)
				reasoning.WriteString(r)
				if content.String() != tc.wantContent || reasoning.String() != tc.wantReasoning {
					t.Fatalf("pieces of %d: content %q reasoning %q, want %q %q",
						size, content.String(), reasoning.String(), tc.wantContent, tc.wantReasoning)
				}
			}
		})
	}
}
