package storage

import (
	"context"
	"time"
)

// File metadata of the Files API. The bytes live in a blob store
// (storage/blob); the rows here say which blobs exist, whose they are and
// until when they are served.

// File is a stored file's metadata.
type File struct {
	ID        string // "file-" + 24 base62 characters; see files.NewID
	AccountID string
	Filename  string // sanitized; metadata only, never a path
	Purpose   string
	Bytes     int64
	MIME      string // media type judged from the content
	SHA256    string // lower-case hex digest of the content
	Source    FileSource
	CreatedAt time.Time
	// ExpiresAt is when the file stops being served. For a pending file
	// it is the end of its upload lease.
	ExpiresAt time.Time
	// Flagged marks a file stored without a malware verdict because the
	// scanner was unavailable and the service fails open.
	Flagged bool
	// Pending is true from Begin until Commit.
	Pending bool
}

// FileSource says where a file came from.
type FileSource string

const (
	FileUploaded  FileSource = "upload"    // POST /files
	FileGenerated FileSource = "generated" // produced by the orchestrator's tools
)

// FileQuota bounds an account's stored files. Zero fields are unlimited.
type FileQuota struct {
	MaxFiles int
	MaxBytes int64
}

// FileUsage is what an account stores.
type FileUsage struct {
	Files int
	Bytes int64
}

// FileOrder is a listing order by creation time.
type FileOrder string

const (
	FileOrderAsc  FileOrder = "asc"
	FileOrderDesc FileOrder = "desc"
)

// FileListParams selects a page of an account's files.
type FileListParams struct {
	// Most files returned. The service passes its page size plus one to
	// learn whether more follow; it is always positive.
	Limit int
	// After is a file id; only files beyond it in Order are returned. It
	// need not name an existing file. Empty: from the start.
	After string
	// Order of the files by id, which is creation order (see files.NewID).
	// Default: FileOrderDesc.
	Order FileOrder
	// Purpose, when not empty, returns only files with this purpose.
	Purpose string
}

// FileMeta keeps file metadata: one row per file, in two states.
//
// A pending row is written before an upload's bytes are, so that a crash
// at any point leaves a row naming the blob to clean up: its ExpiresAt is
// the end of the upload's lease, after which the janitor removes both.
// Pending rows are invisible to Get, List and Usage and count toward no
// quota. Commit turns a pending row into a visible one.
//
// A row is visible at time now when it is committed and its ExpiresAt is
// after now. Every method that reads takes now from the caller, so that
// a file is gone the instant it expires, before any cleanup runs, and so
// that tests control time. Invisible rows answer exactly like missing
// ones (ErrNotFound), and so do rows of other accounts.
//
// Implementations are safe for concurrent use by many goroutines and by
// many processes sharing one database. The contract suite in
// files/filestest checks these semantics; SQL implementations order ids
// bytewise (COLLATE "C" in PostgreSQL, the default BINARY in SQLite).
type FileMeta interface {
	// Begin inserts f as a pending row (f.Pending is ignored). f.ID is
	// fresh; f.ExpiresAt is the lease end.
	Begin(ctx context.Context, f File) error

	// Commit turns the pending row f.ID of f.AccountID into a visible
	// file with f's Filename, Purpose, Bytes, MIME, SHA256, Flagged and
	// ExpiresAt.
	//
	// The quota check is exact under concurrency: in one transaction
	// that is serialized against every other Commit for the same account
	// (for example by locking the account's row first, or SERIALIZABLE
	// isolation with retries), it counts the account's visible files at
	// now and sums their Bytes, and refuses with ErrTooManyFiles if
	// count+1 > q.MaxFiles, or ErrTooManyBytes if sum+f.Bytes >
	// q.MaxBytes, changing nothing. A zero limit is not checked. N
	// concurrent commits against room for k files therefore admit
	// exactly k.
	//
	// ErrNotFound if there is no pending row f.ID for f.AccountID, or its
	// lease ended at or before now (the janitor may be removing it).
	Commit(ctx context.Context, f File, q FileQuota, now time.Time) error

	// Get returns the visible file id of accountID, or ErrNotFound.
	Get(ctx context.Context, accountID, id string, now time.Time) (File, error)

	// List returns up to p.Limit visible files of accountID in p.Order
	// of id, after p.After, with p.Purpose if set.
	List(ctx context.Context, accountID string, p FileListParams, now time.Time) ([]File, error)

	// Usage counts accountID's visible files and sums their bytes.
	Usage(ctx context.Context, accountID string, now time.Time) (FileUsage, error)

	// Expire makes the visible file id of accountID invisible at once by
	// setting its ExpiresAt to now, and returns it as it was. ErrNotFound
	// if it is not visible, so a second Expire of the same file fails.
	// The row stays until Remove, so that the janitor finds it again if
	// the caller dies before deleting the blob.
	Expire(ctx context.Context, accountID, id string, now time.Time) (File, error)

	// Expired returns up to limit rows, pending or committed, whose
	// ExpiresAt is at or before now, oldest ExpiresAt first.
	Expired(ctx context.Context, now time.Time, limit int) ([]File, error)

	// Remove deletes the row id if it is pending, or if its ExpiresAt is
	// at or before now. It is a no-op, not an error, for a missing row or
	// a visible one, so that janitors on several nodes can race.
	Remove(ctx context.Context, id string, now time.Time) error
}
