// Package files is the Files API core: uploads streamed to a blob store
// with format checks, malware scanning and per-account quotas, files the
// orchestrator generates, listing, download, deletion and expiry. It is
// plain Go; the Caddy module and the SQL storage.FileMeta live elsewhere.
//
// The HTTP surface, limits, formats and error codes are documented in
// docs/files.md.
package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
)

// Purposes a client may upload with. "assistants" is the one the spec
// documents; "user_data" and "vision" are OpenAI's purposes for files
// given to models as input. Purposes for OpenAI features Switchyard does
// not offer (batch, fine-tune, evals) are refused.
var DefaultPurposes = []string{"assistants", "user_data", "vision"}

// PurposeGenerated is the purpose of files the orchestrator stores, as
// OpenAI names assistant outputs.
const PurposeGenerated = "assistants_output"

// Defaults of Config.
const (
	DefaultUploadTimeout = time.Hour
	DefaultRetention     = 30 * 24 * time.Hour
	// leaseMargin keeps a pending row beyond its upload's deadline, so a
	// janitor on a node whose clock runs ahead does not clean up an
	// upload still inside its deadline.
	leaseMargin = 5 * time.Minute
	// cleanupTimeout bounds the cleanup after a failed upload, which
	// runs even when the client has gone.
	cleanupTimeout = 30 * time.Second
)

// Config configures a Service.
type Config struct {
	// Metadata store. Required.
	Meta storage.FileMeta

	// Blob store for the bytes. Required.
	Blobs blob.Store

	// Limits: MaxUploadBytes (per file, required), MaxStoredFiles and
	// MaxStoredBytes (per account, uploaded and generated together; zero
	// means unlimited) and FileRetention (zero means DefaultRetention).
	Profile policy.Profile

	// Malware scanner that uploads stream through. Nil: no scanning.
	// Generated files are not scanned.
	Scanner Scanner

	// What to do when the scanner cannot give a verdict. False (the
	// default) refuses the upload with 503 av_unavailable; true stores it
	// with storage.File.Flagged set.
	ScanFailOpen bool

	// Purposes accepted on upload. Default: DefaultPurposes.
	Purposes []string

	// Longest an upload may take, from the first byte of the request
	// body to storing its metadata. Default: DefaultUploadTimeout.
	UploadTimeout time.Duration

	// Clock. Default: time.Now.
	Now func() time.Time

	// Logger for failures the client does not see (cleanup, scanner
	// outages). Default: discard.
	Logger *slog.Logger
}

// Service implements the Files API on a storage.FileMeta and a blob store. It is
// safe for concurrent use.
type Service struct {
	meta          storage.FileMeta
	blobs         blob.Store
	maxUpload     int64
	quota         storage.FileQuota
	retention     time.Duration
	scanner       Scanner
	scanFailOpen  bool
	purposes      []string
	uploadTimeout time.Duration
	now           func() time.Time
	log           *slog.Logger
}

// NewService checks cfg and returns a Service.
func NewService(cfg Config) (*Service, error) {
	if cfg.Meta == nil || cfg.Blobs == nil {
		return nil, errors.New("files: Meta and Blobs are required")
	}
	if cfg.Profile.MaxUploadBytes <= 0 {
		return nil, errors.New("files: Profile.MaxUploadBytes must be positive")
	}
	s := &Service{
		meta:          cfg.Meta,
		blobs:         cfg.Blobs,
		maxUpload:     cfg.Profile.MaxUploadBytes,
		quota:         storage.FileQuota{MaxFiles: cfg.Profile.MaxStoredFiles, MaxBytes: cfg.Profile.MaxStoredBytes},
		retention:     orDefault(cfg.Profile.FileRetention, DefaultRetention),
		scanner:       cfg.Scanner,
		scanFailOpen:  cfg.ScanFailOpen,
		purposes:      cfg.Purposes,
		uploadTimeout: orDefault(cfg.UploadTimeout, DefaultUploadTimeout),
		now:           cfg.Now,
		log:           cfg.Logger,
	}
	if s.purposes == nil {
		s.purposes = DefaultPurposes
	}
	if slices.Contains(s.purposes, PurposeGenerated) {
		return nil, fmt.Errorf("files: purpose %s is reserved for generated files", PurposeGenerated)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// MaxUploadBytes is the largest file Upload and StoreGenerated accept.
func (s *Service) MaxUploadBytes() int64 { return s.maxUpload }

// MaxRequestBytes is the largest upload request body that can succeed:
// the file plus the form's bounded overhead. A proxy in front may cap
// request bodies at this size.
func (s *Service) MaxRequestBytes() int64 { return s.maxUpload + maxFormOverhead }

// Retention is how long a stored file is kept.
func (s *Service) Retention() time.Duration { return s.retention }

// Upload stores the file of a multipart/form-data request body with the
// given Content-Type header, for accountID. See upload.go for the form.
// Errors wrap the kinds in errors.go, except context errors when ctx
// ends.
func (s *Service) Upload(ctx context.Context, accountID, contentType string, body io.Reader) (storage.File, error) {
	now := s.now()
	if err := s.checkRoom(ctx, accountID, now); err != nil {
		return storage.File{}, err
	}
	var scan Scan
	flagged := false
	if s.scanner != nil {
		var err error
		if scan, err = s.scanner.NewScan(ctx); err != nil {
			if err := s.scanUnavailable(ctx, err); err != nil {
				return storage.File{}, err
			}
			flagged = true
		} else {
			defer scan.Close()
		}
	}
	up, err := s.begin(ctx, accountID, storage.FileUploaded, now)
	if err != nil {
		return storage.File{}, err
	}
	defer up.abortUnlessDone()

	form, err := s.receiveForm(up.ctx, contentType, body, up, scan)
	if err != nil {
		return storage.File{}, err
	}
	if scan != nil {
		v, err := scan.Verdict()
		switch {
		case err != nil:
			if err := s.scanUnavailable(ctx, err); err != nil {
				return storage.File{}, err
			}
			flagged = true
		case v.Infected:
			s.log.InfoContext(ctx, "upload refused by malware scan",
				"account", accountID, "signature", v.Signature, "sha256", up.sum)
			return storage.File{}, ErrAVHit
		}
	}
	up.file.Filename = form.filename
	up.file.Purpose = form.purpose
	up.file.Flagged = flagged
	up.file.ExpiresAt = now.Add(s.retention)
	if form.expiresAfter > 0 {
		up.file.ExpiresAt = now.Add(form.expiresAfter)
	}
	return up.commit(form.filename)
}

// StoreGenerated stores a file the orchestrator produced for accountID,
// under the same per-file limit, quotas, format checks and retention as
// uploads, with purpose PurposeGenerated. filename is sanitized like an
// uploaded one. Errors are Upload's: a full quota wraps ErrTooManyFiles
// or ErrTooManyBytes, so that the orchestrator can fall back to inline
// content, and a store failure is ErrInternal.
func (s *Service) StoreGenerated(ctx context.Context, accountID, filename string, r io.Reader) (storage.File, error) {
	name, err := SanitizeFilename(filename)
	if err != nil {
		return storage.File{}, errBadRequest("invalid_filename", "The generated file has no usable filename.")
	}
	now := s.now()
	if err := s.checkRoom(ctx, accountID, now); err != nil {
		return storage.File{}, err
	}
	up, err := s.begin(ctx, accountID, storage.FileGenerated, now)
	if err != nil {
		return storage.File{}, err
	}
	defer up.abortUnlessDone()
	if err := up.put(r, nil); err != nil {
		return storage.File{}, err
	}
	if up.sniff.Size() == 0 {
		return storage.File{}, errBadRequest("empty_file", "The generated file is empty.")
	}
	up.file.Filename = name
	up.file.Purpose = PurposeGenerated
	up.file.ExpiresAt = now.Add(s.retention)
	return up.commit(name)
}

// checkRoom refuses early, before any bytes are read, when the account
// is already at a limit. Commit makes the exact check.
func (s *Service) checkRoom(ctx context.Context, accountID string, now time.Time) error {
	if s.quota == (storage.FileQuota{}) {
		return nil
	}
	u, err := s.meta.Usage(ctx, accountID, now)
	if err != nil {
		return s.internal(ctx, "reading file usage", err)
	}
	if s.quota.MaxFiles > 0 && u.Files >= s.quota.MaxFiles {
		return errMaxFiles(s.quota.MaxFiles)
	}
	if s.quota.MaxBytes > 0 && u.Bytes >= s.quota.MaxBytes {
		return errMaxStorage(s.quota.MaxBytes)
	}
	return nil
}

// scanUnavailable applies the fail-closed or fail-open policy to a
// scanner failure: nil means store the file flagged.
func (s *Service) scanUnavailable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.log.WarnContext(ctx, "malware scanner unavailable", "error", err, "fail_open", s.scanFailOpen)
	if s.scanFailOpen {
		return nil
	}
	return ErrScannerUnavailable
}

// internal logs err and returns ErrInternal, which does not carry err
// (its text may hold details the client must not see, and its kind must
// not be mistaken for one of the Service's), or the context's error when
// the caller has gone.
func (s *Service) internal(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	s.log.ErrorContext(ctx, "files: "+what, "error", err)
	return fmt.Errorf("%w: %s", ErrInternal, what)
}

// Page is a page of a listing.
type Page struct {
	Files   []storage.File
	HasMore bool
}

// Listing bounds, as OpenAI's.
const (
	MaxListLimit     = 10_000
	DefaultListLimit = 10_000
	maxPurposeLen    = 64
)

// List returns a page of accountID's files. p.Limit 0 means
// DefaultListLimit; other values must be within 1..MaxListLimit. p.Order
// "" means storage.FileOrderDesc.
func (s *Service) List(ctx context.Context, accountID string, p storage.FileListParams) (Page, error) {
	switch {
	case p.Limit == 0:
		p.Limit = DefaultListLimit
	case p.Limit < 1 || p.Limit > MaxListLimit:
		return Page{}, errBadRequest("invalid_limit", "limit must be between 1 and %d.", MaxListLimit)
	}
	switch p.Order {
	case "":
		p.Order = storage.FileOrderDesc
	case storage.FileOrderAsc, storage.FileOrderDesc:
	default:
		return Page{}, errBadRequest("invalid_order", "order must be asc or desc.")
	}
	if p.After != "" && !ValidID(p.After) {
		return Page{}, errBadRequest("invalid_after", "after must be a file id.")
	}
	if len(p.Purpose) > maxPurposeLen {
		return Page{}, errBadRequest("invalid_purpose", "purpose is too long.")
	}
	want := p.Limit
	p.Limit++
	now := s.now()
	fs, err := s.meta.List(ctx, accountID, p, now)
	if err != nil {
		return Page{}, s.internal(ctx, "listing files", err)
	}
	// The store already hides expired files; checking again keeps the
	// rule in one obvious place.
	fs = slices.DeleteFunc(fs, func(f storage.File) bool { return !f.ExpiresAt.After(now) })
	page := Page{Files: fs, HasMore: len(fs) > want}
	if page.HasMore {
		page.Files = fs[:want]
	}
	return page, nil
}

// Get returns accountID's file id. A file of another account, an expired
// one and a missing one all give the same ErrNotFound.
func (s *Service) Get(ctx context.Context, accountID, id string) (storage.File, error) {
	if !ValidID(id) {
		return storage.File{}, errNotFound(id)
	}
	now := s.now()
	f, err := s.meta.Get(ctx, accountID, id, now)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !f.ExpiresAt.After(now) {
		return storage.File{}, errNotFound(id)
	}
	if err != nil {
		return storage.File{}, s.internal(ctx, "reading file metadata", err)
	}
	return f, nil
}

// Content opens accountID's file id for reading, with Get's rules: a
// download, or the orchestrator reading an input_file part, so that one
// account can never read another's file by id. The caller closes the
// Object.
func (s *Service) Content(ctx context.Context, accountID, id string) (storage.File, blob.Object, error) {
	f, err := s.Get(ctx, accountID, id)
	if err != nil {
		return storage.File{}, nil, err
	}
	o, err := s.blobs.Open(ctx, blobKey(f.ID))
	if errors.Is(err, blob.ErrNotFound) {
		// Deleted or expired between the two reads.
		return storage.File{}, nil, errNotFound(id)
	}
	if err != nil {
		return storage.File{}, nil, s.internal(ctx, "opening file content", err)
	}
	return f, o, nil
}

// Delete deletes accountID's file id and returns it. Deleting it again
// gives ErrNotFound.
func (s *Service) Delete(ctx context.Context, accountID, id string) (storage.File, error) {
	if !ValidID(id) {
		return storage.File{}, errNotFound(id)
	}
	now := s.now()
	f, err := s.meta.Expire(ctx, accountID, id, now)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.File{}, errNotFound(id)
	}
	if err != nil {
		return storage.File{}, s.internal(ctx, "deleting file", err)
	}
	// The file is gone for the client now. Removing its bytes and row
	// can finish after the client leaves; if it fails, the janitor finds
	// the expired row.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	s.removeFile(cctx, f.ID, now)
	return f, nil
}

// removeFile deletes a file's blob and then its row. The row goes only
// once the blob is gone, so that no blob is ever left without a row
// naming it.
func (s *Service) removeFile(ctx context.Context, id string, now time.Time) bool {
	if err := s.blobs.Delete(ctx, blobKey(id)); err != nil {
		s.log.WarnContext(ctx, "files: deleting blob", "file", id, "error", err)
		return false
	}
	if err := s.meta.Remove(ctx, id, now); err != nil {
		s.log.WarnContext(ctx, "files: removing metadata", "file", id, "error", err)
		return false
	}
	return true
}
