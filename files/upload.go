package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
)

// The upload form, as OpenAI's POST /files takes it:
//
//	file                     the content, with a filename (required, exactly one)
//	purpose                  one of Config.Purposes (required, once)
//	expires_after[anchor]    "created_at" (optional)
//	expires_after[seconds]   3600 up to the retention period (optional)
//
// The body is read as a stream with mime/multipart's Reader, never
// buffered whole: the file part goes straight to the blob store while
// its size, SHA-256, format and malware verdict are worked out. Other
// fields are read and dropped.
const (
	// maxFormOverhead bounds everything in the body that is not the
	// file's content: part headers, boundaries and other fields. It is
	// how over-long part headers are refused.
	maxFormOverhead = 64 << 10
	// maxFieldBytes bounds one field's value.
	maxFieldBytes = 256
	// minExpiresAfter is OpenAI's lower bound for expires_after[seconds].
	minExpiresAfter = time.Hour
)

type form struct {
	filename     string
	purpose      string
	expiresAfter time.Duration // 0: the service's retention
}

func (s *Service) receiveForm(ctx context.Context, contentType string, body io.Reader, up *upload, scan Scan) (form, error) {
	var f form
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return f, errBadRequest("invalid_content_type",
			"The request must be multipart/form-data with a boundary, holding the fields file and purpose.")
	}
	br := &budgetReader{r: body, budget: maxFormOverhead}
	mr := multipart.NewReader(br, params["boundary"])
	var seenFile, seenPurpose bool
	var anchor, seconds *string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return f, formError(ctx, br, err)
		}
		name := part.FormName()
		filename, hasFilename := partFilename(part)
		switch {
		case name == "file":
			if seenFile {
				return f, errBadRequest("multiple_files", "Only one file can be uploaded per request.")
			}
			seenFile = true
			if !hasFilename {
				return f, errBadRequest("invalid_filename", "The file part needs a filename.")
			}
			if f.filename, err = SanitizeFilename(filename); err != nil {
				return f, errBadRequest("invalid_filename", "The file part's filename is empty once directories and control characters are removed.")
			}
			if err := up.put(&contentCounter{r: part, b: br}, scan); err != nil {
				var se sourceError
				if errors.As(err, &se) {
					return f, formError(ctx, br, se.err)
				}
				return f, err
			}
			if up.sniff.Size() == 0 {
				return f, errBadRequest("empty_file", "The uploaded file is empty.")
			}
		case hasFilename:
			return f, errBadRequest("multiple_files", "Only one file can be uploaded per request, in the field named file.")
		case name == "purpose":
			if seenPurpose {
				return f, errBadRequest("invalid_purpose", "purpose is given more than once.")
			}
			seenPurpose = true
			v, err := readField(ctx, br, part)
			if err != nil {
				return f, err
			}
			if !slices.Contains(s.purposes, v) {
				return f, errBadRequest("invalid_purpose", "purpose %q is not supported. Use one of: %v.", truncate(v, 64), s.purposes)
			}
			f.purpose = v
		case name == "expires_after[anchor]" || name == "expires_after[seconds]":
			v, err := readField(ctx, br, part)
			if err != nil {
				return f, err
			}
			if name == "expires_after[anchor]" {
				anchor = &v
			} else {
				seconds = &v
			}
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return f, formError(ctx, br, err)
			}
		}
	}
	if !seenFile {
		return f, errBadRequest("missing_file", "The request has no file: send it in a multipart field named file, with a filename.")
	}
	if !seenPurpose {
		return f, errBadRequest("missing_purpose", "The request has no purpose field. Use one of: %v.", s.purposes)
	}
	if anchor != nil || seconds != nil {
		if f.expiresAfter, err = s.parseExpiresAfter(anchor, seconds); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (s *Service) parseExpiresAfter(anchor, seconds *string) (time.Duration, error) {
	bad := errBadRequest("invalid_expires_after",
		"expires_after needs anchor created_at and seconds between %d and %d.",
		int64(minExpiresAfter/time.Second), int64(s.retention/time.Second))
	if anchor == nil || *anchor != "created_at" || seconds == nil {
		return 0, bad
	}
	n, err := strconv.ParseInt(*seconds, 10, 64)
	if err != nil || n < int64(minExpiresAfter/time.Second) || n > int64(s.retention/time.Second) {
		return 0, bad
	}
	return time.Duration(n) * time.Second, nil
}

// partFilename returns the filename parameter of a part's
// Content-Disposition, unaltered (mime/multipart's FileName applies
// filepath.Base, which on Unix leaves backslashes; SanitizeFilename does
// all of it), and whether there was one.
func partFilename(p *multipart.Part) (string, bool) {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return "", false
	}
	v, ok := params["filename"]
	return v, ok
}

func readField(ctx context.Context, br *budgetReader, part *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
	if err != nil {
		return "", formError(ctx, br, err)
	}
	if len(b) > maxFieldBytes {
		return "", errBadRequest("field_too_long", "The form field %q is longer than %d bytes.", truncate(part.FormName(), 64), maxFieldBytes)
	}
	return string(b), nil
}

// formError classifies a failure to read the multipart body.
func formError(ctx context.Context, br *budgetReader, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if br.exceeded {
		return errBadRequest("multipart_headers_too_large",
			"The multipart headers and fields other than the file exceed %d bytes.", maxFormOverhead)
	}
	return errBadRequest("malformed_multipart", "The request body is not valid multipart/form-data: %s.", truncate(err.Error(), 200))
}

var errFormOverhead = errors.New("files: multipart overhead limit exceeded")

// budgetReader sits under the multipart reader and fails once the bytes
// read beyond those consumed as file content exceed budget. The
// multipart reader buffers at most a few KiB ahead, which the budget
// covers.
type budgetReader struct {
	r       io.Reader
	budget  int64
	total   int64
	content int64 // bytes consumed as file content; see contentCounter
	// exceeded is set once the budget is spent. mime/multipart does not
	// always wrap the errors it passes on, so this, not the error
	// value, tells the cause.
	exceeded bool
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.total-b.content > b.budget {
		b.exceeded = true
		return 0, errFormOverhead
	}
	n, err := b.r.Read(p)
	b.total += int64(n)
	return n, err
}

// contentCounter credits file content read from a part to the budget.
type contentCounter struct {
	r io.Reader
	b *budgetReader
}

func (c *contentCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.b.content += int64(n)
	return n, err
}

// upload is one file on its way into the store, from its pending row to
// its commit. It is used by one goroutine.
type upload struct {
	s      *Service
	parent context.Context
	ctx    context.Context // bounded by the upload timeout
	cancel context.CancelFunc
	file   storage.File
	key    string
	sniff  Sniffer
	sum    string // hex SHA-256, once put
	// keep is set once the blob and row must stay: committed, or the
	// commit's outcome is unknown (the janitor then decides).
	keep bool
}

func (s *Service) begin(ctx context.Context, accountID string, src storage.FileSource, now time.Time) (*upload, error) {
	id := NewID(now)
	f := storage.File{
		ID:        id,
		AccountID: accountID,
		Source:    src,
		CreatedAt: now,
		ExpiresAt: now.Add(s.uploadTimeout + leaseMargin),
		Pending:   true,
	}
	if err := s.meta.Begin(ctx, f); err != nil {
		return nil, s.internal(ctx, "recording pending upload", err)
	}
	// The deadline runs on the real clock: it bounds real I/O.
	uctx, cancel := context.WithTimeout(ctx, s.uploadTimeout)
	return &upload{s: s, parent: ctx, ctx: uctx, cancel: cancel, file: f, key: blobKey(id)}, nil
}

// sourceError is a failure of the reader an upload's content came from,
// as opposed to one of the store.
type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }
func (e sourceError) Unwrap() error { return e.err }

var errFileTooLarge = errors.New("files: file too large")

// put streams r to the blob store, teeing it into the sniffer, the hash
// and scan (if any), and stops at one byte over the upload limit.
func (u *upload) put(r io.Reader, scan Scan) error {
	h := sha256.New()
	sinks := []io.Writer{h, &u.sniff}
	if scan != nil {
		sinks = append(sinks, scan)
	}
	src := &limitedReader{r: r, limit: u.s.maxUpload}
	n, err := u.s.blobs.Put(u.ctx, u.key, io.TeeReader(src, io.MultiWriter(sinks...)))
	switch {
	case src.over:
		return errTooLarge(u.s.maxUpload)
	case err != nil && u.ctx.Err() != nil && u.parent.Err() == nil:
		return errUploadTimeout(u.s.uploadTimeout)
	case err != nil && src.err != nil:
		return sourceError{src.err}
	case err != nil:
		return u.s.internal(u.parent, "storing file content", err)
	case n != u.sniff.Size():
		return u.s.internal(u.parent, "storing file content", fmt.Errorf("stored %d bytes of %d", n, u.sniff.Size()))
	}
	u.sum = hex.EncodeToString(h.Sum(nil))
	u.file.Bytes = n
	u.file.SHA256 = u.sum
	return nil
}

// commit judges the stored content's format and makes the file visible.
func (u *upload) commit(filename string) (storage.File, error) {
	ra := &blobReaderAt{ctx: u.ctx, blobs: u.s.blobs, key: u.key}
	format, err := u.sniff.Judge(filename, ra)
	ra.Close()
	if ra.err != nil {
		return storage.File{}, u.s.internal(u.parent, "reading back file content", ra.err)
	}
	if err != nil {
		return storage.File{}, err
	}
	u.file.MIME = format.MIME
	u.file.Pending = false
	err = u.s.meta.Commit(u.ctx, u.file, u.s.quota, u.s.now())
	switch {
	case err == nil:
		u.keep = true
		return u.file, nil
	case errors.Is(err, storage.ErrTooManyFiles):
		return storage.File{}, errMaxFiles(u.s.quota.MaxFiles)
	case errors.Is(err, storage.ErrTooManyBytes):
		return storage.File{}, errMaxStorage(u.s.quota.MaxBytes)
	case errors.Is(err, storage.ErrNotFound):
		return storage.File{}, errUploadTimeout(u.s.uploadTimeout)
	}
	// The commit may have happened even though it reported an error;
	// leave both the blob and the row for the janitor to settle after
	// the lease.
	u.keep = true
	return storage.File{}, u.s.internal(u.parent, "committing file", err)
}

// abortUnlessDone removes the blob and the pending row of an upload that
// did not commit, even if the client has gone.
func (u *upload) abortUnlessDone() {
	u.cancel()
	if u.keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.parent), cleanupTimeout)
	defer cancel()
	u.s.removeFile(ctx, u.file.ID, u.s.now())
}

// limitedReader passes at most limit bytes and fails, passing nothing
// more, once the source holds more. It records the source's own error.
type limitedReader struct {
	r     io.Reader
	limit int64
	n     int64
	over  bool
	err   error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.over {
		return 0, errFileTooLarge
	}
	if room := l.limit - l.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	k, err := l.r.Read(p)
	l.n += int64(k)
	if l.n > l.limit {
		l.over = true
		return 0, errFileTooLarge
	}
	if err != nil && err != io.EOF {
		l.err = err
	}
	return k, err
}

// blobReaderAt reads a stored blob at offsets, opening it on first use:
// only zip-based formats need it. It records the first read failure, so
// that a storage fault is not mistaken for a damaged file.
type blobReaderAt struct {
	ctx   context.Context
	blobs blob.Store
	key   string

	mu  sync.Mutex
	obj blob.Object
	err error
}

func (r *blobReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	if r.obj == nil {
		if r.obj, r.err = r.blobs.Open(r.ctx, r.key); r.err != nil {
			return 0, r.err
		}
	}
	if ra, ok := r.obj.(io.ReaderAt); ok {
		n, err := ra.ReadAt(p, off)
		if err != nil && err != io.EOF {
			r.err = err
		}
		return n, err
	}
	if _, err := r.obj.Seek(off, io.SeekStart); err != nil {
		r.err = err
		return 0, err
	}
	n, err := io.ReadFull(r.obj, p)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return n, io.EOF
	case err != nil:
		r.err = err
	}
	return n, err
}

func (r *blobReaderAt) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.obj != nil {
		r.obj.Close()
	}
}
