package billing

import (
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/switchyardhq/switchyard/internal/clip"
)

// TokenEncoding is the BPE vocabulary estimates are counted with: the one
// of current OpenAI models, and the one the gateway uses for every model,
// since backends name models it cannot know.
const TokenEncoding = "o200k_base"

// encoder loads the vocabulary once, on first use, from the copy
// compiled into the binary: estimates never reach for the network. It
// returns nil when the vocabulary cannot be loaded, and CountTokens then
// falls back to EstimateTokens.
var encoder = sync.OnceValue(func() *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(TokenEncoding)
	if err != nil {
		return nil
	}
	return enc
})

// CountTokens is the number of TokenEncoding tokens in text, for
// estimates of what a backend that reported no usage consumed. Text that
// looks like a special token ("<|endoftext|>") is counted as the
// ordinary text it is. It is safe for concurrent use; the first call
// loads the vocabulary (see WarmTokenizer). Should the vocabulary fail to
// load, it counts four bytes a token, like EstimateTokens.
func CountTokens(text string) int64 {
	if text == "" {
		return 0
	}
	enc := encoder()
	if enc == nil {
		return EstimateTokens(int64(len(text)))
	}
	return int64(len(enc.EncodeOrdinary(text)))
}

// WarmTokenizer loads the vocabulary of CountTokens now, so that the
// first estimate does not pay for it, and reports whether it loaded.
func WarmTokenizer() bool { return encoder() != nil }

// DefaultCountBudget is the bytes of text a TokenCounter tokenizes when
// its Budget is zero: at the tokenizer's few megabytes a second, about
// 3 ms of work, however long the text.
const DefaultCountBudget = 16 << 10

// TokenCounter estimates the tokens of a run of texts with bounded work:
// texts are tokenized (CountTokens) until Budget bytes have been, and
// the bytes beyond are counted at the tokens per byte seen so far, or at
// four bytes a token when nothing was tokenized. The zero value is ready
// to use with DefaultCountBudget. It is not safe for concurrent use.
type TokenCounter struct {
	// Budget is how many bytes to tokenize. Zero: DefaultCountBudget;
	// negative: none, every byte is counted by the ratio.
	Budget int

	counted       int64 // bytes tokenized
	countedTokens int64 // their tokens
	rest          int64 // bytes not tokenized
}

// Add counts text.
func (c *TokenCounter) Add(text string) {
	budget := c.Budget
	if budget == 0 {
		budget = DefaultCountBudget
	}
	left := int64(budget) - c.counted
	if left <= 0 {
		c.rest += int64(len(text))
		return
	}
	head := text
	if int64(len(head)) > left {
		head = clip.Bytes(head, int(left))
	}
	c.counted += int64(len(head))
	c.countedTokens += CountTokens(head)
	c.rest += int64(len(text) - len(head))
}

// addText counts text held in bytes, converting to a string only what
// the budget lets the tokenizer see (a few bytes more, so that Add can
// cut between runes).
func (c *TokenCounter) addText(b []byte) {
	budget := c.Budget
	if budget == 0 {
		budget = DefaultCountBudget
	}
	head := min(len(b), max(int(int64(budget)-c.counted), 0)+utf8.UTFMax)
	c.Add(string(b[:head]))
	c.AddBytes(int64(len(b) - head))
}

// AddBytes counts n bytes of text that is not at hand, at the ratio.
func (c *TokenCounter) AddBytes(n int64) {
	if n > 0 {
		c.rest += n
	}
}

// Tokens is the estimate of what was added: the tokens counted, plus
// the other bytes at the observed ratio, rounded up.
func (c *TokenCounter) Tokens() int64 {
	if c.rest == 0 {
		return c.countedTokens
	}
	if c.counted == 0 || c.countedTokens == 0 {
		return c.countedTokens + EstimateTokens(c.rest)
	}
	// rest × tokens / bytes, split so that no product can overflow:
	// countedTokens is at most counted, which is at most the budget.
	whole := c.rest / c.counted * c.countedTokens
	part := (c.rest%c.counted*c.countedTokens + c.counted - 1) / c.counted
	return c.countedTokens + whole + part
}
