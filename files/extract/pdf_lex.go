package extract

import (
	"bufio"
	"errors"
	"io"
	"strconv"
)

// A small PDF object reader for the structure checks in pdf_check.go,
// which run before the parser may read the file. It reads only what those
// checks need (numbers, names, strings, arrays, dictionaries, references,
// keywords), each token and object bounded.

var errPDFSyntax = errors.New("PDF syntax error")

const (
	maxTokenBytes = 64 << 10
	maxObjDepth   = 32
	maxObjItems   = 1 << 16
)

type pdfName string
type pdfKeyword string
type pdfString string
type pdfRef struct{ num, gen int64 }

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokValue
	tokDictOpen
	tokDictClose
	tokArrayOpen
	tokArrayClose
)

type pdfToken struct {
	kind tokenKind
	v    any // int64, float64, pdfName, pdfKeyword, pdfString
}

type pdfLexer struct {
	r      *bufio.Reader
	pos    int64 // file offset of the next unread byte
	queued []pdfToken
}

func newPDFLexer(r io.ReaderAt, off, size int64) *pdfLexer {
	return &pdfLexer{r: bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 16<<10), pos: off}
}

func (l *pdfLexer) readByte() (byte, bool) {
	c, err := l.r.ReadByte()
	if err != nil {
		return 0, false
	}
	l.pos++
	return c, true
}

func (l *pdfLexer) unreadByte() {
	l.r.UnreadByte()
	l.pos--
}

func pdfSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func pdfDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func (l *pdfLexer) unread(t pdfToken) { l.queued = append(l.queued, t) }

// next returns the next token. Errors are errPDFSyntax.
func (l *pdfLexer) next() (pdfToken, error) {
	if n := len(l.queued); n > 0 {
		t := l.queued[n-1]
		l.queued = l.queued[:n-1]
		return t, nil
	}
	var c byte
	for {
		var ok bool
		if c, ok = l.readByte(); !ok {
			return pdfToken{kind: tokEOF}, nil
		}
		if c == '%' {
			for ok && c != '\n' && c != '\r' {
				c, ok = l.readByte()
			}
			continue
		}
		if !pdfSpace(c) {
			break
		}
	}
	switch c {
	case '[':
		return pdfToken{kind: tokArrayOpen}, nil
	case ']':
		return pdfToken{kind: tokArrayClose}, nil
	case '<':
		if d, ok := l.readByte(); ok && d == '<' {
			return pdfToken{kind: tokDictOpen}, nil
		} else if ok {
			l.unreadByte()
		}
		return l.hexString()
	case '>':
		if d, ok := l.readByte(); ok && d == '>' {
			return pdfToken{kind: tokDictClose}, nil
		}
		return pdfToken{}, errPDFSyntax
	case '(':
		return l.literal()
	case '/':
		b, err := l.regular(nil)
		return pdfToken{kind: tokValue, v: pdfName(b)}, err
	}
	b, err := l.regular([]byte{c})
	if err != nil {
		return pdfToken{}, err
	}
	s := string(b)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return pdfToken{kind: tokValue, v: n}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return pdfToken{kind: tokValue, v: f}, nil
	}
	return pdfToken{kind: tokValue, v: pdfKeyword(s)}, nil
}

// regular reads a run of regular characters after b.
func (l *pdfLexer) regular(b []byte) ([]byte, error) {
	for {
		c, ok := l.readByte()
		if !ok {
			return b, nil
		}
		if pdfSpace(c) || pdfDelim(c) {
			l.unreadByte()
			return b, nil
		}
		if len(b) == maxTokenBytes {
			return nil, errPDFSyntax
		}
		b = append(b, c)
	}
}

// hexString reads a hexadecimal string after its '<'; its digits are
// kept undecoded, which the checks do not mind.
func (l *pdfLexer) hexString() (pdfToken, error) {
	var b []byte
	for {
		c, ok := l.readByte()
		if !ok || len(b) == maxTokenBytes {
			return pdfToken{}, errPDFSyntax
		}
		if c == '>' {
			return pdfToken{kind: tokValue, v: pdfString(b)}, nil
		}
		b = append(b, c)
	}
}

// literal reads a parenthesised string; its escapes are kept as they
// are, which the checks do not mind.
func (l *pdfLexer) literal() (pdfToken, error) {
	var b []byte
	depth := 1
	for {
		c, ok := l.readByte()
		if !ok || len(b) == maxTokenBytes {
			return pdfToken{}, errPDFSyntax
		}
		switch c {
		case '\\':
			if d, ok := l.readByte(); ok {
				b = append(b, c, d)
			}
			continue
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return pdfToken{kind: tokValue, v: pdfString(b)}, nil
			}
		}
		b = append(b, c)
	}
}

// object reads one object: a value, a reference, an array ([]any) or a
// dictionary (map[string]any, keys without the slash).
func (l *pdfLexer) object(depth int) (any, error) {
	if depth > maxObjDepth {
		return nil, errPDFSyntax
	}
	t, err := l.next()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tokValue:
		if n, ok := t.v.(int64); ok {
			return l.maybeRef(n)
		}
		return t.v, nil
	case tokArrayOpen:
		var a []any
		for {
			t, err := l.next()
			if err != nil {
				return nil, err
			}
			if t.kind == tokArrayClose {
				return a, nil
			}
			if t.kind == tokEOF || len(a) == maxObjItems {
				return nil, errPDFSyntax
			}
			l.unread(t)
			v, err := l.object(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case tokDictOpen:
		d := map[string]any{}
		for {
			t, err := l.next()
			if err != nil {
				return nil, err
			}
			if t.kind == tokDictClose {
				return d, nil
			}
			key, ok := t.v.(pdfName)
			if t.kind != tokValue || !ok || len(d) == maxObjItems {
				return nil, errPDFSyntax
			}
			v, err := l.object(depth + 1)
			if err != nil {
				return nil, err
			}
			d[string(key)] = v
		}
	}
	return nil, errPDFSyntax
}

// maybeRef completes "n g R" after the integer n.
func (l *pdfLexer) maybeRef(n int64) (any, error) {
	t1, err := l.next()
	if err != nil {
		return nil, err
	}
	if g, ok := t1.v.(int64); ok && t1.kind == tokValue {
		t2, err := l.next()
		if err != nil {
			return nil, err
		}
		if t2.kind == tokValue && t2.v == pdfKeyword("R") {
			return pdfRef{n, g}, nil
		}
		l.unread(t2)
	}
	l.unread(t1)
	return n, nil
}

// objectHeader reads "n g obj" and returns n.
func (l *pdfLexer) objectHeader() (int64, error) {
	var v [3]any
	for i := range v {
		t, err := l.next()
		if err != nil {
			return 0, err
		}
		v[i] = t.v
	}
	n, ok1 := v[0].(int64)
	_, ok2 := v[1].(int64)
	if !ok1 || !ok2 || v[2] != pdfKeyword("obj") {
		return 0, errPDFSyntax
	}
	return n, nil
}
