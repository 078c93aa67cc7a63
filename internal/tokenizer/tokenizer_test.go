package tokenizer

import (
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

func TestCount(t *testing.T) {
	cases := []struct {
		name string
		text string
		want int64
	}{
		{name: "empty", text: "", want: 0},
		{name: "one word", text: "hello", want: 1},
		{name: "sentence", text: "Hello, world!", want: 4},
		{name: "special token text is ordinary text", text: "<|endoftext|>", want: 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Count(tc.text); got != tc.want {
				t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}

// Counting from many goroutines at once, the first call included, gives
// every one the count of a single call.
func TestCountConcurrent(t *testing.T) {
	text := strings.Repeat("Prices are in integer cents; rounding happens once. ", 20)
	want := Count(text)
	if want <= 20 || want >= int64(len(text)) {
		t.Fatalf("Count = %d for %d bytes of English", want, len(text))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := Count(text); got != want {
				t.Errorf("concurrent Count = %d, want %d", got, want)
			}
		})
	}
	wg.Wait()
}

// The tokenizer counts what the four-characters rule only guesses: code
// and digits take more tokens than their length suggests, repeated
// letters far fewer.
func TestCountDiffersFromCharacterRule(t *testing.T) {
	long := strings.Repeat("a", 400)
	if got := Count(long); got >= Estimate(int64(len(long))) {
		t.Errorf("Count(400 × a) = %d, not below the %d of the character rule", got, Estimate(400))
	}
	digits := "3.14159 2.71828 1.41421 1.73205 0.57721 1.61803"
	if got := Count(digits); got <= Estimate(int64(len(digits))) {
		t.Errorf("Count(%q) = %d, not above the %d of the character rule", digits, got, Estimate(int64(len(digits))))
	}
}

func BenchmarkCount(b *testing.B) {
	Warm()
	for _, bc := range []struct {
		name string
		text string
	}{
		{name: "delta", text: " world"},
		{name: "paragraph", text: strings.Repeat("The usage of the final chunk is charged. ", 12)},
		{name: "64KiB", text: strings.Repeat("Money is never a float: prices are int64 cents. ", 1365)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				Count(bc.text)
			}
		})
	}
}

func TestCounter(t *testing.T) {
	hello := strings.Repeat(" hello", 1000) // one token a word
	cases := []struct {
		name     string
		budget   int
		texts    []string
		bytes    int64
		min, max int64
	}{
		{name: "within the budget it is exact", texts: []string{"Hello, world!", " hello"}, min: 5, max: 5},
		{name: "past the budget it scales", budget: 600, texts: []string{hello}, min: 1000, max: 1003},
		{name: "later texts scale too", budget: 600, texts: []string{hello, hello}, min: 2000, max: 2006},
		{name: "bytes not at hand scale", texts: []string{hello}, bytes: 6000, min: 2000, max: 2000},
		{name: "no budget counts four bytes a token", budget: -1, texts: []string{hello}, min: 1500, max: 1500},
		{name: "nothing", min: 0, max: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Counter{Budget: tc.budget}
			for _, s := range tc.texts {
				c.Add(s)
			}
			c.AddBytes(tc.bytes)
			if got := c.Tokens(); got < tc.min || got > tc.max {
				t.Errorf("Tokens() = %d, want %d to %d", got, tc.min, tc.max)
			}
		})
	}
}

// AddText converts only what it tokenizes, and counts like Add.
func TestCounterAddText(t *testing.T) {
	text := strings.Repeat("Grüße aus Köln, 12345! ", 2000) // past the budget, with runes across its edge
	for _, budget := range []int{0, 7, 100, -1} {
		var byString, byBytes Counter
		byString.Budget, byBytes.Budget = budget, budget
		byString.Add(text)
		byBytes.AddText([]byte(text))
		if a, b := byString.Tokens(), byBytes.Tokens(); a != b || a == 0 {
			t.Errorf("budget %d: Add counts %d, AddText %d", budget, a, b)
		}
	}
}

// The compiled-in vocabulary is o200k_base as the loader module ships
// it: every token at its rank, none more.
func TestVocabularyMatchesLoader(t *testing.T) {
	want, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	got, err := vocabularyLoader{}.LoadTiktokenBpe("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d tokens compiled in, the loader has %d", len(got), len(want))
	}
	for tok, rank := range want {
		if r, ok := got[tok]; !ok || r != rank {
			t.Fatalf("token %q: rank %d (present %v), want %d", tok, r, ok, rank)
		}
	}
}

func TestVocabularyLoaderRefusesOthers(t *testing.T) {
	if _, err := (vocabularyLoader{}).LoadTiktokenBpe("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"); err == nil {
		t.Error("cl100k_base loaded, but only o200k_base is compiled in")
	}
}

func TestReadVocabularyRefusesDamage(t *testing.T) {
	cut := func(b []byte) []byte {
		zw, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		return zw.EncodeAll(b, nil)
	}
	cases := []struct {
		name string
		data []byte
	}{
		{name: "not zstd", data: []byte("o200k_base")},
		{name: "truncated stream", data: vocabulary[:len(vocabulary)/2]},
		{name: "token longer than the rest", data: cut([]byte{5, 'a', 'b'})},
		{name: "empty token", data: cut([]byte{1, 'a', 0})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ranks, err := readVocabulary(tc.data); err == nil {
				t.Errorf("read %d ranks from damaged data", len(ranks))
			}
		})
	}
}
