package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
)

// tiktokenEncoder is how Count counted before it matched the pattern by
// hand: tiktoken-go's EncodeOrdinary on the same vocabulary.
var tiktokenEncoder = sync.OnceValue(func() *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(vocabularyLoader{})
	enc, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		panic(err)
	}
	return enc
})

func tiktokenCount(text string) int64 {
	return int64(len(tiktokenEncoder().EncodeOrdinary(text)))
}

// o200kPattern is tiktoken-go's pattern of o200k_base.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
	`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var o200kRegexp = regexp2.MustCompile(o200kPattern, regexp2.None)

// regexpPieces are the pieces of valid UTF-8 text by the pattern, as
// byte offsets of their ends.
func regexpPieces(t testing.TB, text string) []int {
	runes := []rune(text)
	var ends []int
	m, err := o200kRegexp.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = o200kRegexp.FindNextMatch(m) {
		if ends != nil && len(string(runes[:m.Index])) != ends[len(ends)-1] || ends == nil && m.Index != 0 {
			t.Fatalf("%q: the pattern skips text before rune %d", text, m.Index)
		}
		ends = append(ends, len(string(runes[:m.Index+m.Length])))
	}
	if err != nil {
		t.Fatal(err)
	}
	return ends
}

func handPieces(text string) []int {
	var ends []int
	for i := 0; i < len(text); {
		i = nextPiece(text, i)
		ends = append(ends, i)
	}
	return ends
}

// tricky is the alphabet of the random texts: a character of each
// class the pattern tells apart, and the ones where classes overlap.
var tricky = []string{
	"a", "z", "A", "Z", "é", "É", "ǅ", "ʰ", "中", "ー", "\u0301", "\u0903", "\u20dd", "1", "9", "½", "٣", "Ⅻ",
	" ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2003", "\u3000", "\x85", "\v", "\f", "\u200b",
	"'", "'s", "'S", "'re", "'LL", "'ve", "'d", "'m", "'t", "'r", "'l", "/", "!", ".", ",", "-", "_", "\"",
	"😀", "🏽", "\xff", "\xc3", "the", "The", "THE", "ing", " of", "123", "{\"", "\":", "\n\n", "  \n",
}

func randomTexts(n int) []string {
	rng := rand.New(rand.NewPCG(28, 11))
	texts := make([]string, n)
	for i := range texts {
		var b strings.Builder
		for range rng.IntN(24) + 1 {
			b.WriteString(tricky[rng.IntN(len(tricky))])
		}
		texts[i] = b.String()
	}
	return texts
}

func equalityTexts() []string {
	texts := append([]string{toolSchemas()}, edgeCases...)
	for _, text := range corpus {
		texts = append(texts, text, text[:len(text)/3], text[len(text)/7:])
	}
	for _, a := range tricky {
		for _, b := range tricky {
			texts = append(texts, a+b, a+b+a, b+" "+a)
		}
	}
	return append(texts, randomTexts(20000)...)
}

// The pieces matched by hand are the pattern's, on valid UTF-8.
func TestPiecesMatchPattern(t *testing.T) {
	for _, text := range equalityTexts() {
		text = string([]rune(text))
		want, got := regexpPieces(t, text), handPieces(text)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: pieces end at %v, the pattern's at %v", text, got, want)
		}
	}
}

// Count gives tiktoken-go's count on every text of the corpus, invalid
// UTF-8 included.
func TestCountMatchesTiktoken(t *testing.T) {
	if !Warm() {
		t.Fatal("no vocabulary")
	}
	for _, text := range equalityTexts() {
		if got, want := Count(text), tiktokenCount(text); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken-go counts %d", text, got, want)
		}
	}
}

// The contractions are matched on bytes: no character beyond ASCII
// lower-cases to one of their letters.
func TestContractionFolding(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); strings.ContainsRune("stmdrvel", l) {
			t.Errorf("%U lower-cases to %q", r, l)
		}
	}
}

// Every character is of the classes regexp2 puts it in, beyond the
// characters of the corpus.
func TestClassesMatchPattern(t *testing.T) {
	classes := []struct {
		class   uint8
		pattern string
	}{
		{classPrefix, `[^\r\n\p{L}\p{N}]`},
		{classUpper, `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`},
		{classLower, `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`},
		{classNumber, `\p{N}`},
		{classSymbol, `[^\s\p{L}\p{N}]`},
		{classSpace, `\s`},
		{classLineEnd, `[\r\n]`},
	}
	for _, c := range classes {
		re := regexp2.MustCompile(`^`+c.pattern+`$`, regexp2.None)
		step := rune(1)
		if testing.Short() {
			step = 97
		}
		for r := rune(0); r <= unicode.MaxRune; r += step {
			if r >= 0xd800 && r <= 0xdfff {
				continue
			}
			want, err := re.MatchRunes([]rune{r})
			if err != nil {
				t.Fatal(err)
			}
			if got := classify(r)&c.class != 0; got != want {
				t.Fatalf("%U: in %s %v, regexp2 says %v", r, c.pattern, got, want)
			}
		}
	}
}

func FuzzCountMatchesTiktoken(f *testing.F) {
	for _, text := range edgeCases {
		f.Add(text)
	}
	for _, text := range randomTexts(200) {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := Count(text), tiktokenCount(text); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken-go counts %d", text, got, want)
		}
	})
}
