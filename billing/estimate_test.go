package billing

import (
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/tokenizer"
)

// A /v1 prompt is estimated by its tokens: a body of digits takes about
// twice the tokens of a body of words of the same length.
func TestEstimatePromptTokens(t *testing.T) {
	body := func(text string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"user","content":"` + text + `"}]}`)
	}
	digits := EstimatePromptTokens(body(strings.Repeat("1234567890", 600)))
	words := EstimatePromptTokens(body(strings.Repeat(" hello", 1000)))
	if diff := digits - words; diff < 950 || diff > 1050 {
		t.Errorf("estimates %d (digits) and %d (words) differ by %d, want about 1000", digits, words, diff)
	}
}

// The estimate of a large body costs no more than its first
// tokenizer.DefaultBudget bytes.
func BenchmarkEstimatePromptTokens(b *testing.B) {
	tokenizer.Warm()
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("Money is never a float. ", 40_000) + `"}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		EstimatePromptTokens(body)
	}
}
