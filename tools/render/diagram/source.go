package diagram

import (
	"strings"

	"github.com/switchyardhq/switchyard/tools/render"
)

// maxNesting bounds how deeply subgraphs may nest. Graphviz recurses
// over nesting with a fixed, unchecked stack in its WebAssembly build:
// a few hundred levels overwrite its memory and break it for every
// later call.
const maxNesting = 32

// graphSpan locates the body of the first graph in a DOT source: open is
// the index just past its opening brace and end the index just past its
// closing one.
type graphSpan struct {
	open, end int
}

// scanGraph finds the first graph's braces the way Graphviz's lexer reads
// the text: braces inside comments, quoted strings and HTML strings do not
// count. Everything else is left to Graphviz's parser.
//
// Unbalanced sources and text after the closing brace are refused here,
// before Graphviz sees them, because its lexer keeps unread input across
// calls: a second graph, or junk, left in its buffer would be read as the
// start of the next, unrelated source.
func scanGraph(src string) (graphSpan, error) {
	var span graphSpan
	depth := 0
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == '#' && lineStart:
			// A C preprocessor line, which Graphviz skips.
			i = skipLine(src, i)
			continue
		case c == '/' && strings.HasPrefix(src[i:], "//"):
			i = skipLine(src, i)
			continue
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return span, sourceErrorf("the comment starting in line %d is not closed with */", lineOf(src, i))
			}
			i += 2 + j + 2
		case c == '"':
			j, closed := skipQuoted(src, i)
			if !closed {
				return span, sourceErrorf("the quoted string starting in line %d is not closed", lineOf(src, i))
			}
			i = j
		case c == '<':
			j, closed := skipHTML(src, i)
			if !closed {
				return span, sourceErrorf("the HTML label starting in line %d is not closed: its < and > do not balance", lineOf(src, i))
			}
			i = j
		case c == '{':
			if depth == 0 {
				span.open = i + 1
			}
			depth++
			if depth > maxNesting {
				return span, sourceErrorf("braces nested more than %d deep in line %d", maxNesting, lineOf(src, i))
			}
			i++
		case c == '}':
			if depth == 0 {
				return span, sourceErrorf("unexpected } in line %d", lineOf(src, i))
			}
			depth--
			i++
			if depth == 0 {
				span.end = i
				return span, trailingText(src, i)
			}
		default:
			i++
		}
		if c != ' ' && c != '\t' && c != '\r' {
			lineStart = false
		}
	}
	if span.open == 0 {
		return span, sourceErrorf("no graph found; the source must look like: digraph { a -> b }")
	}
	return span, sourceErrorf("the graph opened in line %d is not closed: its { and } do not balance", lineOf(src, span.open-1))
}

// sourceErrorf returns a *render.SourceError about the DOT source.
func sourceErrorf(format string, args ...any) error {
	return render.Errorf("invalid DOT source: "+format, args...)
}

// trailingText refuses anything but white space and comments in
// src[from:], the text after the graph.
func trailingText(src string, from int) error {
	lineStart := false
	for i := from; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == ';':
			i++
		case c == '#' && lineStart:
			i = skipLine(src, i)
		case strings.HasPrefix(src[i:], "//"):
			i = skipLine(src, i)
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return sourceErrorf("the comment starting in line %d is not closed with */", lineOf(src, i))
			}
			i += 2 + j + 2
			lineStart = false
		default:
			return sourceErrorf("text after the end of the graph in line %d; the source must hold exactly one graph", lineOf(src, i))
		}
	}
	return nil
}

func skipLine(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

// skipQuoted returns the index past the quoted string starting at
// src[i]. Like Graphviz's lexer it treats only \" as an escape, so "a\\"
// is not closed by its last quote.
func skipQuoted(src string, i int) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if j+1 < len(src) && src[j+1] == '"' {
				j++
			}
		case '"':
			return j + 1, true
		}
	}
	return len(src), false
}

// skipHTML returns the index past the HTML string starting at src[i],
// counting nested angle brackets as Graphviz does.
func skipHTML(src string, i int) (int, bool) {
	nest := 0
	for j := i; j < len(src); j++ {
		switch src[j] {
		case '<':
			nest++
		case '>':
			nest--
			if nest == 0 {
				return j + 1, true
			}
		}
	}
	return len(src), false
}

func lineOf(src string, i int) int {
	return strings.Count(src[:i], "\n") + 1
}

// withDefaults returns src with stmts inserted right after the opening
// brace of its graph, on the same line so that Graphviz's line numbers in
// error messages still match the model's source. Statements placed first
// are defaults: any attribute statement or attribute list in the source
// comes later and wins.
func withDefaults(src string, span graphSpan, stmts string) string {
	var b strings.Builder
	b.Grow(len(src) + len(stmts) + 2)
	b.WriteString(src[:span.open])
	b.WriteByte(' ')
	b.WriteString(stmts)
	b.WriteByte(' ')
	b.WriteString(src[span.open:span.end])
	return b.String()
}
