package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// The Store is the storage.FileMeta of the Files API, so that file rows
// live next to the accounts they belong to and share their backups. This
// package imports files, not the other way round: files depends only on
// the storage contracts, and the MetaStore's record types stay with the
// interface they are part of.

const fileColumns = `id, account_id, filename, purpose, bytes, mime, sha256, source, flagged,
	created_at, expires_at, committed_at IS NULL`

// visibleFile is the condition for a row to be served at the time bound to
// the placeholder $N.
func visibleFile(n int) string {
	return fmt.Sprintf("committed_at IS NOT NULL AND expires_at > $%d", n)
}

// Begin inserts f as a pending row.
func (s *Store) Begin(ctx context.Context, f storage.File) error {
	_, err := s.db.Exec(ctx, `INSERT INTO files (id, account_id, filename, purpose, bytes, mime, sha256, source, flagged,
			created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		f.ID, f.AccountID, f.Filename, f.Purpose, f.Bytes, f.MIME, f.SHA256, string(f.Source), f.Flagged,
		micros(f.CreatedAt), micros(f.ExpiresAt))
	return wrap(err, "beginning file")
}

// Commit makes the pending row f.ID visible if the quota admits it. The
// transaction locks the account row first (FOR UPDATE on PostgreSQL; on
// SQLite every write transaction holds the database's write lock), so
// commits for one account, in any process, count and commit one at a
// time, and the count always includes every commit that went before.
func (s *Store) Commit(ctx context.Context, f storage.File, q storage.FileQuota, now time.Time) error {
	at := micros(now)
	err := s.inTx(ctx, func(tx Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1`+s.dialect.ForUpdate, f.AccountID).Scan(&one)
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT 1 FROM files
			WHERE id = $1 AND account_id = $2 AND committed_at IS NULL AND expires_at > $3`,
			f.ID, f.AccountID, at).Scan(&one)
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		if q.MaxFiles > 0 || q.MaxBytes > 0 {
			u, err := fileUsage(ctx, tx, f.AccountID, at)
			if err != nil {
				return err
			}
			if q.MaxFiles > 0 && u.Files+1 > q.MaxFiles {
				return storage.ErrTooManyFiles
			}
			if q.MaxBytes > 0 && u.Bytes+f.Bytes > q.MaxBytes {
				return storage.ErrTooManyBytes
			}
		}
		// Remove does not lock the account, so the row may have gone
		// since it was read.
		n, err := tx.Exec(ctx, `UPDATE files
			SET filename = $3, purpose = $4, bytes = $5, mime = $6, sha256 = $7, flagged = $8,
				expires_at = $9, committed_at = $10
			WHERE id = $1 AND account_id = $2 AND committed_at IS NULL AND expires_at > $10`,
			f.ID, f.AccountID, f.Filename, f.Purpose, f.Bytes, f.MIME, f.SHA256, f.Flagged,
			micros(f.ExpiresAt), at)
		if err != nil {
			return err
		}
		if n == 0 {
			return storage.ErrNotFound
		}
		return nil
	})
	if errors.Is(err, storage.ErrTooManyFiles) || errors.Is(err, storage.ErrTooManyBytes) {
		return err
	}
	return wrap(err, "committing file")
}

// Get returns a visible file of the account.
func (s *Store) Get(ctx context.Context, accountID, id string, now time.Time) (storage.File, error) {
	f, err := scanFile(s.db.QueryRow(ctx, `SELECT `+fileColumns+` FROM files
		WHERE id = $1 AND account_id = $2 AND `+visibleFile(3), id, accountID, micros(now)))
	if noRows(err) {
		return storage.File{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.File{}, wrap(err, "reading file")
	}
	return f, nil
}

// List pages through the account's visible files by id, which the
// files_account_id and files_account_purpose_id indexes hold in order.
func (s *Store) List(ctx context.Context, accountID string, p storage.FileListParams, now time.Time) ([]storage.File, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	var query strings.Builder
	args := []any{accountID, micros(now)}
	query.WriteString(`SELECT ` + fileColumns + ` FROM files WHERE account_id = $1 AND ` + visibleFile(2))
	if p.Purpose != "" {
		args = append(args, p.Purpose)
		fmt.Fprintf(&query, " AND purpose = $%d", len(args))
	}
	beyond, order := "<", "DESC"
	if p.Order == storage.FileOrderAsc {
		beyond, order = ">", "ASC"
	}
	if p.After != "" {
		args = append(args, p.After)
		fmt.Fprintf(&query, " AND id %s $%d", beyond, len(args))
	}
	args = append(args, p.Limit)
	fmt.Fprintf(&query, " ORDER BY id %s LIMIT $%d", order, len(args))
	return s.queryFiles(ctx, "listing files", query.String(), args...)
}

// Usage counts the account's visible files and sums their sizes.
func (s *Store) Usage(ctx context.Context, accountID string, now time.Time) (storage.FileUsage, error) {
	u, err := fileUsage(ctx, s.db, accountID, micros(now))
	return u, wrap(err, "reading file usage")
}

func fileUsage(ctx context.Context, q Querier, accountID string, at int64) (storage.FileUsage, error) {
	// SUM of a BIGINT is a NUMERIC on PostgreSQL; the cast keeps it an
	// integer for every driver.
	var n, bytes int64
	err := q.QueryRow(ctx, `SELECT COUNT(*), CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM files
		WHERE account_id = $1 AND `+visibleFile(2), accountID, at).Scan(&n, &bytes)
	return storage.FileUsage{Files: int(n), Bytes: bytes}, err
}

// Expire ends a visible file's service now and returns it as it was. The
// row is locked while read, so of concurrent Expires of one file exactly
// one finds it visible.
func (s *Store) Expire(ctx context.Context, accountID, id string, now time.Time) (storage.File, error) {
	at := micros(now)
	var f storage.File
	err := s.inTx(ctx, func(tx Tx) error {
		var err error
		f, err = scanFile(tx.QueryRow(ctx, `SELECT `+fileColumns+` FROM files
			WHERE id = $1 AND account_id = $2 AND `+visibleFile(3)+s.dialect.ForUpdate, id, accountID, at))
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE files SET expires_at = $2 WHERE id = $1`, id, at)
		return err
	})
	if err != nil {
		return storage.File{}, wrap(err, "expiring file")
	}
	return f, nil
}

// Expired returns rows whose time is up, in the order of the files_expires
// index.
func (s *Store) Expired(ctx context.Context, now time.Time, limit int) ([]storage.File, error) {
	if limit <= 0 {
		return nil, nil
	}
	return s.queryFiles(ctx, "listing expired files", `SELECT `+fileColumns+` FROM files
		WHERE expires_at <= $1 ORDER BY expires_at, id LIMIT $2`, micros(now), limit)
}

// Remove deletes the row if it is pending or its time is up. The
// condition holds on the row as it is when deleted, so a file that a
// racing Commit made visible stays.
func (s *Store) Remove(ctx context.Context, id string, now time.Time) error {
	_, err := s.db.Exec(ctx, `DELETE FROM files WHERE id = $1 AND (committed_at IS NULL OR expires_at <= $2)`,
		id, micros(now))
	return wrap(err, "removing file")
}

func (s *Store) queryFiles(ctx context.Context, doing, query string, args ...any) ([]storage.File, error) {
	out, err := queryAll(ctx, s.db, scanFile, query, args...)
	return out, wrap(err, doing)
}

func scanFile(r Row) (storage.File, error) {
	var f storage.File
	var source string
	var created, expires int64
	err := r.Scan(&f.ID, &f.AccountID, &f.Filename, &f.Purpose, &f.Bytes, &f.MIME, &f.SHA256, &source, &f.Flagged,
		&created, &expires, &f.Pending)
	if err != nil {
		return storage.File{}, err
	}
	f.Source = storage.FileSource(source)
	f.CreatedAt = fromMicros(created)
	f.ExpiresAt = fromMicros(expires)
	return f, nil
}

// Interface guard.
var _ storage.FileMeta = (*Store)(nil)
