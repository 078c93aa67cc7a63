// Package extract reads the text of documents (pdf, docx, xlsx, csv, txt,
// md) from an io.ReaderAt, for the model to read. It is a plain library:
// it knows nothing of accounts, stores or requests; the orchestrator's
// translator.Opener feeds it files from the Files API.
//
// Every extractor treats its input as hostile. Work and memory are bounded
// by the output size, by fixed limits on what is decompressed and parsed,
// and by the context; docs/files.md ("Attachments") lists the limits.
package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
)

// DefaultMaxChars is the output bound Text uses when given none. It is the
// orchestrator's default bound on one attachment's text.
const DefaultMaxChars = 100_000

// Errors of Text. Each returned error wraps one of these or the context's
// error.
var (
	// ErrUnsupported: the media type has no text to extract (images,
	// video) or is unknown.
	ErrUnsupported = errors.New("extract: no text extraction for this media type")
	// ErrMalformed: the content could not be parsed as its format,
	// including failures inside a parsing library.
	ErrMalformed = errors.New("extract: malformed file")
	// ErrLimit: the file goes beyond a safety limit (a zip bomb, an
	// oversized structure), so it is refused rather than read in part.
	ErrLimit = errors.New("extract: file exceeds an extraction limit")
)

// kind is a format Text can read.
type kind int

const (
	kindNone kind = iota
	kindPlain
	kindPDF
	kindDOCX
	kindXLSX
)

// Media types as the Files API stores them (files/format.go), without
// parameters.
const (
	mimePDF  = "application/pdf"
	mimeDOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

func kindOf(mediaType string) kind {
	base, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return kindNone
	}
	switch base {
	case "text/plain", "text/csv", "text/markdown":
		return kindPlain
	case mimePDF:
		return kindPDF
	case mimeDOCX:
		return kindDOCX
	case mimeXLSX:
		return kindXLSX
	}
	return kindNone
}

// HasText reports whether Text extracts text from files of mediaType.
// Parameters such as charset are ignored.
func HasText(mediaType string) bool { return kindOf(mediaType) != kindNone }

// Text extracts the text of the file of the given size that r holds, as
// its media type mediaType says how to read it, up to maxChars characters
// (runes; zero or less means DefaultMaxChars). truncated reports that the
// file holds more text than was returned.
//
//   - text/plain, text/csv, text/markdown: the UTF-8 text as it is, less
//     a leading byte order mark; invalid bytes become U+FFFD.
//   - application/pdf: the text of each page, pages separated by a blank
//     line. Pages without a text layer (scans) give nothing.
//   - docx: paragraphs as lines; tabs and line breaks kept; table rows as
//     lines of tab-separated cells. Deleted tracked changes, field codes
//     and the fallback copies of drawings are left out.
//   - xlsx: each worksheet as "## <name>" and then one CSV line per
//     non-empty row, cells placed by their column; dates as ISO 8601.
//
// Control characters other than newline and tab are dropped; in documents
// runs of blank lines are squeezed to one. An unknown or textless media
// type is ErrUnsupported. When ctx ends, Text returns its error at once;
// the PDF parser, which runs on its own goroutine, makes no read of r
// after that but may still be inside one, so r must tolerate a read that
// ends after Text has returned.
func Text(ctx context.Context, mediaType string, r io.ReaderAt, size int64, maxChars int) (text string, truncated bool, err error) {
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	k := kindOf(mediaType)
	if k == kindNone {
		return "", false, fmt.Errorf("%w: %q", ErrUnsupported, mediaType)
	}
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	out := newOutput(maxChars, k != kindPlain)
	switch k {
	case kindPlain:
		err = plainText(ctx, r, size, out)
	case kindPDF:
		err = pdfText(ctx, r, size, out)
	case kindDOCX:
		err = docxText(ctx, r, size, out)
	case kindXLSX:
		err = xlsxText(ctx, r, size, out)
	}
	if errors.Is(err, errFull) {
		err = nil
	}
	if err != nil {
		return "", false, err
	}
	text, truncated = out.result()
	return text, truncated, nil
}

// malformed wraps a parse failure of format in ErrMalformed.
func malformed(format string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrMalformed, format, err)
}

// overLimit reports a refused file in ErrLimit.
func overLimit(format, msg string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrLimit, format, fmt.Sprintf(msg, args...))
}

// blank reports whether s is empty or white space.
func blank(s string) bool { return strings.TrimSpace(s) == "" }
