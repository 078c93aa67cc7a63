package extract

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errFull stops an extractor once the output holds all it may; Text turns
// it into a truncated result.
var errFull = errors.New("extract: output full")

// output collects extracted text up to a number of runes. Extractors
// write to it as they parse and stop at the first errFull, so that the
// size of the answer, not of the file, decides how much is parsed.
type output struct {
	b         strings.Builder
	max       int  // runes that fit
	n         int  // runes written
	squeeze   bool // documents: at most one blank line in a row, no leading blank lines
	newlines  int  // newlines written since the last other rune
	cr        bool // the last rune was a carriage return, written as a newline
	truncated bool
}

func newOutput(maxChars int, squeeze bool) *output {
	return &output{max: maxChars, squeeze: squeeze}
}

// WriteString appends s, cleaned, or as much of it as fits. It returns
// errFull once text that is not white space did not fit.
func (o *output) WriteString(s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if err := o.writeRune(r); err != nil {
			return err
		}
	}
	return nil
}

func (o *output) writeRune(r rune) error {
	if o.squeeze {
		// Documents break lines with CR, LF or both; all become LF.
		cr := o.cr
		o.cr = r == '\r'
		switch {
		case r == '\r':
			r = '\n'
		case r == '\n' && cr:
			return nil
		}
	}
	switch {
	case r == '\n':
		if o.squeeze && (o.n == 0 || o.newlines >= 2) {
			return nil
		}
	case r == '\t', r == '\r':
	case unicode.IsControl(r), r == '\uFEFF':
		return nil
	}
	if o.n >= o.max {
		if unicode.IsSpace(r) {
			// White space past the end would be trimmed anyway; it does
			// not make the text longer than what is shown.
			return nil
		}
		o.truncated = true
		return errFull
	}
	o.b.WriteRune(r) // invalid input arrives as RuneError, written as U+FFFD
	o.n++
	if r == '\n' {
		o.newlines++
	} else if r != ' ' && r != '\t' {
		o.newlines = 0
	}
	return nil
}

// remaining is how many more runes fit.
func (o *output) remaining() int { return o.max - o.n }

// markTruncated records that the input held more than was read, when
// an extractor stops at a limit before the output is full.
func (o *output) markTruncated() { o.truncated = true }

func (o *output) result() (string, bool) {
	s := o.b.String()
	if o.squeeze {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s, o.truncated
}
