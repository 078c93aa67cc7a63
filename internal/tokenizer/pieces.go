package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// The pieces BPE runs on are those of o200k_base's pattern, matched by
// hand rather than by tiktoken-go's backtracking regexp, which allocates
// a match object for every piece (most of a count's garbage). The
// pattern, alternatives tried in order at each position:
//
//	1 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	2 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	3 \p{N}{1,3}
//	4 ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//	5 \s*[\r\n]+
//	6 \s+(?!\S)
//	7 \s+
//
// with \s as unicode.IsSpace and the categories of package unicode, as
// regexp2 has them. Every character starts some alternative, so the
// pieces tile the text. TestPiecesMatchTiktoken holds the two to the
// same counts.

// Character classes of the pattern, as bits.
const (
	classPrefix  = 1 << iota // [^\r\n\p{L}\p{N}]
	classUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	classLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	classNumber              // \p{N}
	classSymbol              // [^\s\p{L}\p{N}]
	classSpace               // \s
	classLineEnd             // [\r\n]
)

var asciiClasses = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classifyRune(r)
	}
	return t
}()

// bmpClasses are the classes of the Basic Multilingual Plane, made on
// first use: a character's classes take some ten lookups in package
// unicode's tables, most of the time of a count of CJK text without it.
var bmpClasses = sync.OnceValue(func() *[1 << 16]uint8 {
	t := new([1 << 16]uint8)
	for r := range rune(len(t)) {
		t[r] = classifyRune(r)
	}
	return t
})

func classify(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClasses[r]
	}
	if r < 1<<16 {
		return bmpClasses()[r]
	}
	return classifyRune(r)
}

func classifyRune(r rune) uint8 {
	var c uint8
	letter, number, mark := unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r)
	space := unicode.IsSpace(r)
	if r == '\r' || r == '\n' {
		c |= classLineEnd
	} else if !letter && !number {
		c |= classPrefix
	}
	if mark || unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) {
		c |= classUpper
	}
	if mark || unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) {
		c |= classLower
	}
	if number {
		c |= classNumber
	}
	if space {
		c |= classSpace
	} else if !letter && !number {
		c |= classSymbol
	}
	return c
}

// at is the class and width of the character of s at i, which must be
// valid UTF-8; at the end of s it is no class at all.
func at(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	if s[i] < utf8.RuneSelf {
		return asciiClasses[s[i]], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classify(r), n
}

// run is the end of the run of characters of class from i.
func run(s string, i int, class uint8) int {
	for {
		c, n := at(s, i)
		if c&class == 0 {
			return i
		}
		i += n
	}
}

// nextPiece is the end of the piece of valid UTF-8 text s that starts
// at i < len(s).
func nextPiece(s string, i int) int {
	c, n := at(s, i)
	if c&(classPrefix|classUpper|classLower) != 0 {
		if end := word(s, i, c, n); end > 0 {
			return end
		}
	}
	if c&classNumber != 0 { // 3
		end := i + n
		for range 2 {
			c, n := at(s, end)
			if c&classNumber == 0 {
				break
			}
			end += n
		}
		return end
	}
	if start := i; s[i] == ' ' || c&classSymbol != 0 { // 4
		if s[i] == ' ' {
			start++
		}
		if c, _ := at(s, start); c&classSymbol != 0 {
			end := run(s, start, classSymbol)
			for end < len(s) && (s[end] == '\r' || s[end] == '\n' || s[end] == '/') {
				end++
			}
			return end
		}
	}
	// c is a space: every character is a letter, a mark, a number, a
	// symbol or a space.
	end := run(s, i, classSpace)
	lastLineEnd, last := -1, i
	for j := i; j < end; {
		if s[j] == '\r' || s[j] == '\n' {
			lastLineEnd = j
		}
		last = j
		_, n := at(s, j)
		j += n
	}
	switch {
	case lastLineEnd >= 0: // 5
		return lastLineEnd + 1
	case end == len(s): // 6, to the end
		return end
	case last > i: // 6, short of the space before a non-space
		return last
	default: // 7
		return end
	}
}

// word is the end of alternative 1, else of alternative 2, at i, whose
// character is of class c and n bytes; 0 when neither matches.
func word(s string, i int, c uint8, n int) int {
	// The optional prefix is taken when it can be, and given back only
	// when the rest fails with it: which matters for a mark, of both the
	// prefix's class and the letters'.
	starts := [2]int{i, -1}
	if c&classPrefix != 0 {
		starts = [2]int{i + n, i}
	}
	for _, start := range starts {
		if start < 0 {
			break
		}
		if end := lowerWord(s, start); end > 0 {
			return contraction(s, end)
		}
	}
	for _, start := range starts {
		if start < 0 {
			break
		}
		if end := run(s, start, classUpper); end > start {
			return contraction(s, run(s, end, classLower))
		}
	}
	return 0
}

// lowerWord is the end of [upper]*[lower]+ at start, or 0: the upper
// run is greedy and gives back a character at a time until a lower one
// follows.
func lowerWord(s string, start int) int {
	upperEnd := run(s, start, classUpper)
	for j := upperEnd; ; {
		if end := run(s, j, classLower); end > j {
			return end
		}
		if j == start {
			return 0
		}
		_, n := utf8.DecodeLastRuneInString(s[start:j])
		j -= n
	}
}

// contraction is the end of the optional (?i:'s|'t|'re|'ve|'m|'ll|'d)
// at i. Only ASCII letters fold to these (TestContractionFolding).
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return i
}
