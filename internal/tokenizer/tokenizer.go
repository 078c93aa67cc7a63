// Package tokenizer counts tokens the way current OpenAI models do
// (o200k_base), for estimates of what a backend that reported no usage
// consumed, and holds the four-bytes-a-token rule for text that is not at
// hand. The vocabulary is compiled into the binary, so that an estimate
// never reaches for the network.
package tokenizer

import (
	_ "embed"
	"fmt"
	"path"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/switchyardhq/switchyard/internal/clip"
)

//go:generate go run gen_vocabulary.go

// Encoding is the BPE vocabulary estimates are counted with: the one
// of current OpenAI models, and the one the gateway uses for every model,
// since backends name models it cannot know.
const Encoding = "o200k_base"

// encoder loads the vocabulary once, on first use, from the copy
// compiled into the binary: estimates never reach for the network. It
// returns nil when the vocabulary cannot be loaded, and Count then falls
// back to Estimate.
var encoder = sync.OnceValue(func() *bpe {
	ranks, err := readVocabulary(vocabulary)
	if err != nil {
		return nil
	}
	bmpClasses()
	return &bpe{ranks: ranks}
})

// vocabulary is o200k_base, OpenAI's published vocabulary (MIT licence,
// as shipped by github.com/pkoukk/tiktoken-go-loader), in a third of the
// space: every token's bytes after one byte of their length, in rank
// order, zstd-compressed: 0.94 MB where zlib took 1.09 MB, and the zstd
// decoder is in stock Caddy's binary already (Smallstep's database,
// badger, links it).
// gen_vocabulary.go writes it. Only this one vocabulary is compiled in,
// where the loader module embeds four.
//
//go:embed o200k_base.vocab.zst
var vocabulary []byte

// vocabularyLoader hands tiktoken-go the compiled-in vocabulary, for the
// tests that hold Count to its EncodeOrdinary.
type vocabularyLoader struct{}

func (vocabularyLoader) LoadTiktokenBpe(file string) (map[string]int, error) {
	if path.Base(file) != Encoding+".tiktoken" {
		return nil, fmt.Errorf("tokenizer: only %s is compiled in, not %s", Encoding, path.Base(file))
	}
	return readVocabulary(vocabulary)
}

// readVocabulary reads the ranks of a vocabulary in the form of
// o200k_base.vocab.zst.
func readVocabulary(compressed []byte) (map[string]int, error) {
	zr, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: reading the vocabulary: %w", err)
	}
	defer zr.Close()
	data, err := zr.DecodeAll(compressed, nil)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: reading the vocabulary: %w", err)
	}
	ranks := make(map[string]int, 200_000)
	for rank := 0; len(data) > 0; rank++ {
		n := int(data[0])
		if n == 0 || n >= len(data) {
			return nil, fmt.Errorf("tokenizer: the vocabulary is cut short at rank %d", rank)
		}
		ranks[string(data[1:1+n])] = rank
		data = data[1+n:]
	}
	return ranks, nil
}

// Count is the number of Encoding tokens in text, for
// estimates of what a backend that reported no usage consumed. Text that
// looks like a special token ("<|endoftext|>") is counted as the
// ordinary text it is. It is safe for concurrent use; the first call
// loads the vocabulary (see Warm). Should the vocabulary fail to load, it
// counts four bytes a token, like Estimate.
func Count(text string) int64 {
	if text == "" {
		return 0
	}
	enc := encoder()
	if enc == nil {
		return Estimate(int64(len(text)))
	}
	return enc.count(text)
}

// Warm loads the vocabulary of Count now, so that the
// first estimate does not pay for it, and reports whether it loaded.
func Warm() bool { return encoder() != nil }

// DefaultBudget is the bytes of text a Counter tokenizes when
// its Budget is zero: at the tokenizer's few megabytes a second, about
// 3 ms of work, however long the text.
const DefaultBudget = 16 << 10

// Counter estimates the tokens of a run of texts with bounded work:
// texts are tokenized (Count) until Budget bytes have been, and
// the bytes beyond are counted at the tokens per byte seen so far, or at
// four bytes a token when nothing was tokenized. The zero value is ready
// to use with DefaultBudget. It is not safe for concurrent use.
type Counter struct {
	// Budget is how many bytes to tokenize. Zero: DefaultBudget;
	// negative: none, every byte is counted by the ratio.
	Budget int

	counted       int64 // bytes tokenized
	countedTokens int64 // their tokens
	rest          int64 // bytes not tokenized
}

// Add counts text.
func (c *Counter) Add(text string) {
	budget := c.Budget
	if budget == 0 {
		budget = DefaultBudget
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
	c.countedTokens += Count(head)
	c.rest += int64(len(text) - len(head))
}

// AddText counts text held in bytes, converting to a string only what
// the budget lets the tokenizer see (a few bytes more, so that Add can
// cut between runes).
func (c *Counter) AddText(b []byte) {
	budget := c.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	left := int64(budget) - c.counted
	if left <= 0 {
		// Past the budget only the length counts: no string at all.
		c.rest += int64(len(b))
		return
	}
	head := min(int64(len(b)), left+utf8.UTFMax)
	c.Add(string(b[:head]))
	c.AddBytes(int64(len(b)) - head)
}

// Spent reports whether the budget is used up: text added from now on
// counts only by its length, so a caller need not make it.
func (c *Counter) Spent() bool {
	budget := c.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	return int64(budget)-c.counted <= 0
}

// AddBytes counts n bytes of text that is not at hand, at the ratio.
func (c *Counter) AddBytes(n int64) {
	if n > 0 {
		c.rest += n
	}
}

// Tokens is the estimate of what was added: the tokens counted, plus
// the other bytes at the observed ratio, rounded up.
func (c *Counter) Tokens() int64 {
	if c.rest == 0 {
		return c.countedTokens
	}
	if c.counted == 0 || c.countedTokens == 0 {
		return c.countedTokens + Estimate(c.rest)
	}
	// rest × tokens / bytes, split so that no product can overflow:
	// countedTokens is at most counted, which is at most the budget.
	whole := c.rest / c.counted * c.countedTokens
	part := (c.rest%c.counted*c.countedTokens + c.counted - 1) / c.counted
	return c.countedTokens + whole + part
}

// Estimate estimates tokens from characters (or bytes) at about four per
// token, the usual figure for English text with BPE vocabularies. It is
// the rule for text that is not at hand (the size of a request body when
// its hold is sized) and the fallback of Count.
func Estimate(chars int64) int64 { return (chars + 3) / 4 }
