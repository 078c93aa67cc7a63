package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchyardhq/switchyard/storage"
)

const auditColumns = `id, at, subject, role, action, account, target, remote_ip, outcome, detail`

// AppendAudit inserts one audit entry.
func (s *Store) AppendAudit(ctx context.Context, e storage.AuditEntry) (storage.AuditEntry, error) {
	if e.At.IsZero() {
		e.At = s.now()
	}
	e.At = fromMicros(micros(e.At))
	e.ID = newTimeID("aud_", micros(e.At))
	_, err := s.db.Exec(ctx, `INSERT INTO audit_log (`+auditColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		e.ID, micros(e.At), e.Subject, e.Role, e.Action, e.Account, e.Target, e.RemoteIP, e.Outcome, e.Detail)
	if err != nil {
		return storage.AuditEntry{}, wrap(err, "writing audit entry")
	}
	return e, nil
}

// AuditEntries lists entries newest first.
func (s *Store) AuditEntries(ctx context.Context, q storage.AuditQuery) ([]storage.AuditEntry, error) {
	var where []string
	var args []any
	if q.Account != "" {
		args = append(args, q.Account)
		where = append(where, fmt.Sprintf("account = $%d", len(args)))
	}
	if q.Before != "" {
		args = append(args, q.Before)
		where = append(where, fmt.Sprintf("id < $%d", len(args)))
	}
	query := `SELECT ` + auditColumns + ` FROM audit_log`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC" + limitClause(q.Limit)
	out, err := queryAll(ctx, s.db, scanAudit, query, args...)
	return out, wrap(err, "listing audit entries")
}

// scanAudit reads the auditColumns.
func scanAudit(r Row) (storage.AuditEntry, error) {
	var e storage.AuditEntry
	var at int64
	if err := r.Scan(&e.ID, &at, &e.Subject, &e.Role, &e.Action, &e.Account, &e.Target, &e.RemoteIP, &e.Outcome, &e.Detail); err != nil {
		return storage.AuditEntry{}, err
	}
	e.At = fromMicros(at)
	return e, nil
}
