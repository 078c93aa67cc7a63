package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ledongthuc/pdf"
)

// PDF text is read with github.com/ledongthuc/pdf, which parses objects,
// inflates streams, decodes fonts and tokenizes content well, but was
// written for trusted files: it trusts the numbers a file gives (it sizes
// tables by them, loops as many times as they say, follows their chains
// without noticing loops), reports malformed input by panicking, takes no
// context and cannot be interrupted. What this package adds is only what
// that leaves open, each in one place:
//
//   - pdf_check.go, with its own small bounded lexer (pdf_lex.go), reads
//     the structures the parser reads before any page (the cross-reference
//     sections and the object streams they point into) and refuses files
//     whose numbers would make it allocate gigabytes (a fatal error, not a
//     panic), recurse until the stack overflows, or loop where it reads
//     nothing. The parser's own lexer is unexported and panics, so it
//     cannot do this check for itself.
//   - Its work is bounded through its input: every read it makes goes
//     through ctxReaderAt, which fails once ctx is done, so that a parser
//     call inflating or tokenizing a hostile stream stops at its next read
//     (at most a few MiB of inflation away), and the structure check caps
//     the cross-reference entries and object stream bytes it will inflate.
//   - The page tree is walked here (the parser's Page follows /Kids and
//     /Parent without bound), every stream is measured before the parser
//     reads it, inflated bytes are capped per page and per document, and
//     the page content is interpreted with the parser's tokenizer but this
//     package's text operators (pdf_page.go), which watch ctx and the
//     output size; the parser's own text functions have neither.
//   - Any panic becomes ErrMalformed (guard), and a PDF 2.0 header, which
//     the parser refuses though nothing else it reads differs, is shown
//     to it as 1.7 (fixHeader).
//
// The work runs on its own goroutine so that Text returns as soon as ctx
// is done even if r itself blocks; the goroutine ends at its next read.

// Bounds on PDF extraction, beyond those of checkPDFStructure.
const (
	maxPDFPages = 2000 // pages read; the text ends there, as truncated
	// maxPageTreeNodes bounds the walk of the page tree, which a hostile
	// file can make cyclic; maxPageTreeDepth its nesting.
	maxPageTreeNodes = 20_000
	maxPageTreeDepth = 64
	// maxContentBytes bounds one page's content streams inflated; a page
	// beyond it is shown as unreadable. maxPDFInflated bounds the content
	// streams and font maps of all pages together; the text ends there,
	// as truncated.
	maxContentBytes = 32 << 20
	maxPDFInflated  = 256 << 20
	maxPageFonts    = 256
)

func pdfText(ctx context.Context, r io.ReaderAt, size int64, out *output) error {
	done := make(chan error, 1)
	go func() {
		// out is not touched by the caller once it has stopped waiting.
		done <- guard(func() error { return pdfExtract(ctx, ctxReaderAt{ctx, r}, size, out) })
	}()
	select {
	case err := <-done:
		if cerr := ctx.Err(); cerr != nil {
			// A parser stopped by ctxReaderAt reports a failed read.
			return cerr
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ctxReaderAt fails every read once ctx is done: the parser inflates and
// tokenizes from reads of the file, so this is where it stops.
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// guard runs f and turns a panic in it into ErrMalformed.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if s, ok := p.(pdfStop); ok {
				err = s.err
				return
			}
			err = malformed("pdf", fmt.Errorf("parser failure: %v", p))
		}
	}()
	return f()
}

// pdfStop is panicked by content operators to end the parser's
// interpretation of a page early, with err (errFull, ctx's error) or nil
// to keep what the page gave so far.
type pdfStop struct{ err error }

func pdfExtract(ctx context.Context, r io.ReaderAt, size int64, out *output) error {
	if err := checkPDFStructure(ctx, r, size); err != nil {
		return err
	}
	rd, err := pdf.NewReader(fixHeader(r), size)
	if errors.Is(err, pdf.ErrInvalidPassword) {
		return malformed("pdf", errors.New("the file is encrypted with a password"))
	}
	if err != nil {
		return malformed("pdf", err)
	}
	pages := pageWalker{ctx: ctx, out: out, fonts: map[string]font{}, budget: maxPDFInflated}
	err = pages.walk(rd.Trailer().Key("Root").Key("Pages"), 0)
	if errors.Is(err, errEnough) {
		out.markTruncated()
		err = nil
	}
	return err
}

// errEnough ends the page walk at maxPDFPages or maxPDFInflated.
var errEnough = errors.New("extract: enough pages")

// pageWalker visits the leaves of a page tree in order.
type pageWalker struct {
	ctx    context.Context
	out    *output
	budget int64 // bytes the rest of the document may inflate
	nodes  int
	pages  int
	fonts  map[string]font // by font dictionary, across pages
}

func (w *pageWalker) walk(node pdf.Value, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.nodes++
	if w.nodes > maxPageTreeNodes || depth > maxPageTreeDepth {
		return malformed("pdf", errors.New("the page tree is too large or cyclic"))
	}
	kids := node.Key("Kids")
	if kids.Kind() == pdf.Array {
		for i := range kids.Len() {
			if err := w.walk(kids.Index(i), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if node.Kind() != pdf.Dict {
		return nil
	}
	if w.pages == maxPDFPages {
		return errEnough
	}
	w.pages++
	return w.page(node)
}

// page writes the text of one page, a blank line before it.
func (w *pageWalker) page(p pdf.Value) error {
	contents := p.Key("Contents")
	var streams []pdf.Value
	switch contents.Kind() {
	case pdf.Null:
		return nil
	case pdf.Stream:
		streams = []pdf.Value{contents}
	case pdf.Array:
		if contents.Len() > 1024 {
			return w.unreadable()
		}
		for i := range contents.Len() {
			if err := w.ctx.Err(); err != nil {
				return err
			}
			s := contents.Index(i)
			if s.Kind() != pdf.Stream {
				return w.unreadable()
			}
			streams = append(streams, s)
		}
	default:
		return w.unreadable()
	}
	total := int64(0)
	var tail hexTail
	for _, s := range streams {
		n, err := inflatedSize(s, min(maxContentBytes-total, w.budget), &tail)
		w.budget -= n
		switch {
		case w.budget < 0:
			return errEnough
		case err != nil:
			return w.unreadable()
		}
		total += n
	}
	// The parser inflates the content again to interpret it.
	if w.budget -= total; w.budget < 0 {
		return errEnough
	}
	if tail.open {
		return w.unreadable()
	}
	pr := pageReader{
		ctx:   w.ctx,
		fonts: w.pageFonts(p),
		limit: 4*w.out.remaining() + 1024,
	}
	err := guard(func() error { return pr.interpret(contents) })
	switch {
	case errors.Is(err, ErrMalformed) && blank(pr.b.String()):
		return w.unreadable()
	case err != nil && !errors.Is(err, ErrMalformed):
		return err
	}
	// A page the parser gave up on midway keeps the text read before.
	if pr.cut {
		w.out.markTruncated()
	}
	return w.write(pr.b.String())
}

func (w *pageWalker) write(text string) error {
	if blank(text) {
		return nil
	}
	if err := w.out.WriteString("\n\n"); err != nil {
		return err
	}
	return w.out.WriteString(text)
}

func (w *pageWalker) unreadable() error {
	return w.write(fmt.Sprintf("[Page %d could not be read.]", w.pages))
}

// pageFonts returns the text encodings of a page's fonts by resource
// name. Fonts whose encoding data fails the checks of fontEncoding, or
// that make the parser panic, decode as Latin-1.
func (w *pageWalker) pageFonts(p pdf.Value) map[string]font {
	fonts := inherited(p, "Resources").Key("Font")
	names := fonts.Keys()
	if len(names) > maxPageFonts {
		names = names[:maxPageFonts]
	}
	out := make(map[string]font, len(names))
	for _, name := range names {
		if w.ctx.Err() != nil {
			break // the caller has stopped waiting
		}
		v := fonts.Key(name)
		if v.Kind() != pdf.Dict {
			continue
		}
		// The dictionary's text names the objects it refers to, not
		// their content: the same font object shared by many pages
		// gives the same key, and is parsed once.
		key := v.String()
		if enc, ok := w.fonts[key]; ok {
			out[name] = enc
			continue
		}
		enc := fontEncoding(w.ctx, v, fonts.Key(name), &w.budget)
		if len(key) <= 64<<10 {
			w.fonts[key] = enc
		}
		out[name] = enc
	}
	return out
}

// inherited finds key in the page or its ancestors, which the parser's
// own lookup follows without end on a cyclic /Parent chain.
func inherited(p pdf.Value, key string) pdf.Value {
	v := p
	for range maxPageTreeDepth {
		if v.IsNull() {
			break
		}
		if r := v.Key(key); !r.IsNull() {
			return r
		}
		v = v.Key("Parent")
	}
	return pdf.Value{}
}

// inflatedSize checks a stream's filters and returns its decoded size,
// failing beyond limit, or when the data ends inside a hexadecimal string
// (see hexTail). Only what the parser decodes without a panic, and
// within bounds, passes. tail carries the hexadecimal string state from
// the streams before, for content streams that the parser reads as one.
func inflatedSize(s pdf.Value, limit int64, tail *hexTail) (n int64, err error) {
	if err := checkStreamFilters(s); err != nil {
		return 0, err
	}
	err = guard(func() error {
		rc := s.Reader()
		defer rc.Close()
		n, err = io.Copy(tail, io.LimitReader(rc, limit+1))
		return err
	})
	switch {
	case err != nil:
		return n, err
	case n > limit:
		return n, overLimit("pdf", "a stream inflates beyond %d bytes", limit)
	}
	return n, nil
}

// hexTail watches data for an unterminated hexadecimal string at its
// end: the parser reads the end of a stream as white space, and a hex
// string waits for its closing '>' past any amount of white space, so it
// would never return. Such a string is a '<' followed only by hex digits
// and white space up to the end; the parser gives up (panics) on any other
// byte. The check ignores the tokenizer's state ('<' inside a literal
// string counts too), which can only refuse a rare, broken stream.
type hexTail struct{ open bool }

func (h *hexTail) Write(p []byte) (int, error) {
	for _, c := range p {
		switch {
		case c == '<':
			h.open = true
		case h.open && !pdfSpace(c) && unhex(c) < 0:
			h.open = false
		}
	}
	return len(p), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

var errHexTail = malformed("pdf", errors.New("a stream ends inside a hexadecimal string"))

// checkStreamFilters accepts the filters the parser decodes, with
// bounded predictor rows.
func checkStreamFilters(s pdf.Value) error {
	filter, params := s.Key("Filter"), s.Key("DecodeParms")
	var names []string
	var ps []pdf.Value
	switch filter.Kind() {
	case pdf.Null:
	case pdf.Name:
		names, ps = []string{filter.Name()}, []pdf.Value{params}
	case pdf.Array:
		for i := range min(filter.Len(), 8) {
			names = append(names, filter.Index(i).Name())
			ps = append(ps, params.Index(i))
		}
	default:
		return malformed("pdf", errors.New("bad stream filter"))
	}
	for i, name := range names {
		switch name {
		case "FlateDecode":
			pred := ps[i].Key("Predictor")
			if pred.Kind() == pdf.Null {
				continue
			}
			cols := ps[i].Key("Columns").Int64()
			if pred.Int64() != 12 || cols < 1 || cols > maxPredictorColumns {
				return malformed("pdf", errors.New("unsupported predictor"))
			}
		case "ASCII85Decode":
		default:
			return malformed("pdf", fmt.Errorf("unsupported filter %q", name))
		}
	}
	return nil
}

// fixHeader presents a "%PDF-2.0" header, or one followed by a space,
// as "%PDF-1.7\n": the parser refuses all but 1.x followed by a line
// end, though nothing else it reads differs.
func fixHeader(r io.ReaderAt) io.ReaderAt {
	var h [9]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return r
	}
	if bytes.HasPrefix(h[:], []byte("%PDF-")) && h[5] >= '1' && h[5] <= '9' && h[6] == '.' &&
		h[7] >= '0' && h[7] <= '9' && pdfSpace(h[8]) && !(h[5] == '1' && (h[8] == '\n' || h[8] == '\r')) {
		return headerFix{r}
	}
	return r
}

type headerFix struct{ io.ReaderAt }

func (h headerFix) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.ReaderAt.ReadAt(p, off)
	const head = "%PDF-1.7\n"
	for i := off; i < int64(len(head)) && i-off < int64(n); i++ {
		p[i-off] = head[i]
	}
	return n, err
}
