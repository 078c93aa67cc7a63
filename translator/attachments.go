package translator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"time"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/files/extract"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/translator/request"
)

// Defaults of Opener.
const (
	DefaultMaxImageBytes = 10 << 20
	DefaultTimeout       = 30 * time.Second
)

// TruncationNote ends the text of a document cut to Opener.MaxChars, on
// a line of its own, so that the model knows it sees only the start.
const TruncationNote = "[Truncated: the file has more text than fits; only its beginning is shown.]"

// Opener implements FileOpener on a files.Service: documents
// become their extracted text, images their bytes, and everything else
// (video) an Attachment with only a name and a media type, which the
// orchestrator describes to the model as a file it cannot read. It is
// safe for concurrent use.
type Opener struct {
	// Files is the Files API whose files are opened. Required.
	Files *files.Service

	// MaxChars bounds the text of one document in characters, the
	// truncation note included. Keep it at or below the orchestrator's
	// MaxAttachmentChars, which would otherwise cut the text again and
	// the note with it. Default: DefaultMaxAttachmentChars.
	MaxChars int

	// MaxImageBytes bounds an image given to the model; a larger one
	// fails the request with 400 image_too_large. Set it to the
	// profile's MaxInlineImage so that files and inline images share
	// one limit. Default: DefaultMaxImageBytes (10 MiB).
	MaxImageBytes int64

	// Timeout bounds the text extraction of one file; a document not
	// read in time reaches the model as unreadable. Default:
	// DefaultTimeout.
	Timeout time.Duration

	// Logger receives documents whose text could not be extracted.
	// Default: discard.
	Logger *slog.Logger
}

// OpenFile implements FileOpener. A file accountID does not
// have, deleted or expired is storage.ErrNotFound; a document whose text
// cannot be extracted (damaged, encrypted, over a limit, too slow) is an
// Attachment without text rather than an error, so that the model can
// tell the user.
func (o *Opener) OpenFile(ctx context.Context, accountID, fileID string) (Attachment, error) {
	if o.Files == nil {
		return Attachment{}, errors.New("extract: Opener has no Files service")
	}
	f, obj, err := o.Files.Content(ctx, accountID, fileID)
	if err != nil {
		// files.ErrNotFound is storage.ErrNotFound, which the
		// orchestrator answers with its own code for a missing
		// attachment.
		return Attachment{}, fmt.Errorf("extract: file %s: %w", fileID, err)
	}
	defer obj.Close()
	a := Attachment{Name: f.Filename, MIME: f.MIME}
	switch {
	case isImage(f.MIME):
		a.Image, err = o.readImage(f, obj)
		return a, err
	case extract.HasText(f.MIME):
		a.Text, err = o.text(ctx, f, obj)
		return a, err
	}
	return a, nil
}

func isImage(mediaType string) bool {
	base, _, _ := mime.ParseMediaType(mediaType)
	switch base {
	case "image/png", "image/jpeg", "image/webp", "image/gif":
		return true
	}
	return false
}

func (o *Opener) readImage(f storage.File, obj io.Reader) ([]byte, error) {
	limit := o.MaxImageBytes
	if limit <= 0 {
		limit = DefaultMaxImageBytes
	}
	if f.Bytes > limit {
		return nil, errImageTooLarge(f, limit)
	}
	b, err := io.ReadAll(io.LimitReader(obj, limit+1))
	if err != nil {
		return nil, fmt.Errorf("extract: reading image %s: %w", f.ID, err)
	}
	if int64(len(b)) > limit {
		return nil, errImageTooLarge(f, limit)
	}
	return b, nil
}

func errImageTooLarge(f storage.File, limit int64) *apierror.Error {
	return apierror.InvalidRequest(request.CodeImageTooLarge, fmt.Sprintf(
		"The image file %s has %d bytes; an attached image may have at most %d bytes.", f.ID, f.Bytes, limit))
}

// text extracts a document's text, cut to leave room for TruncationNote.
func (o *Opener) text(ctx context.Context, f storage.File, obj io.Reader) (string, error) {
	maxChars := o.MaxChars
	if maxChars <= 0 {
		maxChars = DefaultMaxAttachmentChars
	}
	room := maxChars - utf8.RuneCountInString(TruncationNote) - 1
	if room < 1 {
		room = maxChars // too small to hold the note; the orchestrator notes the cut
	}
	ra, size, err := readerAt(obj, f)
	if err != nil {
		return "", err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, truncated, err := extract.Text(ectx, f.MIME, ra, size, room)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", cerr
		}
		o.logger().WarnContext(ctx, "extract: document text not extracted",
			"file", f.ID, "mime", f.MIME, "bytes", f.Bytes, "error", err)
		return "", nil
	}
	if truncated && room < maxChars {
		text += "\n" + TruncationNote
	}
	return text, nil
}

func (o *Opener) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// readerAt gives random access to a stored file: directly for a local
// file, or else by reading it into memory once, which is cheaper than the
// many small ranged reads of a remote object that PDF and zip parsing
// make. Stored files are within the upload limit.
func readerAt(obj io.Reader, f storage.File) (io.ReaderAt, int64, error) {
	type sized interface{ Size() int64 }
	size := f.Bytes
	if s, ok := obj.(sized); ok {
		size = s.Size()
	}
	if ra, ok := obj.(io.ReaderAt); ok {
		return ra, size, nil
	}
	b, err := io.ReadAll(io.LimitReader(obj, size+1))
	if err != nil {
		return nil, 0, fmt.Errorf("extract: reading file %s: %w", f.ID, err)
	}
	if int64(len(b)) != size {
		return nil, 0, fmt.Errorf("extract: file %s has %d bytes, expected %d", f.ID, len(b), size)
	}
	return bytes.NewReader(b), size, nil
}

var _ FileOpener = (*Opener)(nil)
