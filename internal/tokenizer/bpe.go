package tokenizer

import (
	"math"
	"sync"
	"unicode/utf8"
)

// bpe counts o200k_base tokens as tiktoken-go's EncodeOrdinary would,
// without its garbage: pieces are slices of the text rather than strings
// cut from a rune copy of it, ranks are looked up without converting,
// and the merge's scratch is reused rather than the tokens kept.
type bpe struct {
	ranks map[string]int
}

// mergeScratch is the merge's table of part starts and ranks, reused
// across counts: a piece needs one entry a byte.
var mergeScratch = sync.Pool{New: func() any { return new([][2]int) }}

// maxKeptScratch is the largest table put back: a 4 KiB piece's.
const maxKeptScratch = 4 << 10

func (e *bpe) count(text string) int64 {
	if !utf8.ValidString(text) {
		// tiktoken-go reads text as runes, so each byte that is not
		// UTF-8 is tokenized as U+FFFD.
		text = string([]rune(text))
	}
	scratch := mergeScratch.Get().(*[][2]int)
	defer func() {
		// One long piece should not pin its table for good.
		if cap(*scratch) <= maxKeptScratch {
			mergeScratch.Put(scratch)
		}
	}()
	var tokens int64
	for i := 0; i < len(text); {
		end := nextPiece(text, i)
		if end <= i {
			// Every character starts a piece; should that ever fail,
			// a byte is a piece rather than the count a loop forever.
			end = i + 1
		}
		tokens += int64(e.pieceTokens(text[i:end], scratch))
		i = end
	}
	return tokens
}

// pieceTokens is the number of tokens of one piece: tiktoken-go's
// bytePairMerge (MIT licence), keeping only how many parts are left.
func (e *bpe) pieceTokens(piece string, scratch *[][2]int) int {
	if len(piece) == 1 {
		return 1
	}
	if _, ok := e.ranks[piece]; ok {
		return 1
	}
	parts := (*scratch)[:0]
	for i := range len(piece) + 1 {
		parts = append(parts, [2]int{i, math.MaxInt})
	}
	*scratch = parts
	rank := func(start, skip int) int {
		if start+skip+2 < len(parts) {
			if r, ok := e.ranks[piece[parts[start][0]:parts[start+skip+2][0]]]; ok {
				return r
			}
		}
		return -1
	}
	for i := 0; i < len(parts)-2; i++ {
		if r := rank(i, 0); r >= 0 {
			parts[i][1] = r
		}
	}
	for len(parts) > 1 {
		minRank, minIdx := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i][1] < minRank {
				minRank, minIdx = parts[i][1], i
			}
		}
		if minRank == math.MaxInt {
			break
		}
		i := minIdx
		if r := rank(i, 1); r >= 0 {
			parts[i][1] = r
		} else {
			parts[i][1] = math.MaxInt
		}
		if i > 0 {
			if r := rank(i-1, 1); r >= 0 {
				parts[i-1][1] = r
			} else {
				parts[i-1][1] = math.MaxInt
			}
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	return len(parts) - 1
}
