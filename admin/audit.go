package admin

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// auditTimeout bounds writing an audit entry, which happens even when the
// client has gone: the action it records has happened.
const auditTimeout = 10 * time.Second

// audit records an action of q's principal.
func (q *request) audit(action, account, target, outcome, detail string) {
	q.h.audit(q.r, storage.AuditEntry{
		Subject: q.who.Subject, Role: q.who.Role(), Action: action,
		Account: account, Target: target, Outcome: outcome, Detail: detail,
	})
}

// audit stores e, stamped with the request's client address, and logs
// it. A store failure is logged loudly but does not undo the action: the
// log line is then the record.
func (h *Handler) audit(r *http.Request, e storage.AuditEntry) {
	e.RemoteIP = h.cfg.ClientIP(r)
	fields := []zap.Field{
		zap.String("subject", e.Subject), zap.String("role", e.Role), zap.String("action", e.Action),
		zap.String("account", e.Account), zap.String("target", e.Target), zap.String("remote_ip", e.RemoteIP),
		zap.String("outcome", e.Outcome), zap.String("detail", e.Detail),
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), auditTimeout)
	defer cancel()
	stored, err := h.cfg.Store.AppendAudit(ctx, e)
	if err != nil {
		h.cfg.Logger.Error("admin audit entry not stored", append(fields, zap.Error(err))...)
		return
	}
	h.cfg.Logger.Info("admin audit", append(fields, zap.String("audit_id", stored.ID))...)
}

// auditJSON is an audit entry as GET /admin/audit lists it.
type auditJSON struct {
	ID       string `json:"id"`
	At       string `json:"at"`
	Subject  string `json:"subject"`
	Role     string `json:"role"`
	Action   string `json:"action"`
	Account  string `json:"account"`
	Target   string `json:"target"`
	RemoteIP string `json:"remote_ip"`
	Outcome  string `json:"outcome"`
	Detail   string `json:"detail"`
}

// auditLog lists the audit log, newest first: GET /admin/audit
// ?limit=&before=&account=.
func (q *request) auditLog() {
	if !q.operatorOnly("audit.read") {
		return
	}
	limit, err := limitParam(q.r, 100, 1000)
	if err != nil {
		q.fail(err)
		return
	}
	v := q.r.URL.Query()
	entries, err := q.h.cfg.Store.AuditEntries(q.ctx, storage.AuditQuery{
		Account: v.Get("account"), Before: v.Get("before"), Limit: limit,
	})
	q.answer(http.StatusOK, listEach(entries, auditOut), err)
}

func auditOut(e storage.AuditEntry) auditJSON {
	return auditJSON{
		ID: e.ID, At: timeJSON(e.At), Subject: e.Subject, Role: e.Role, Action: e.Action,
		Account: e.Account, Target: e.Target, RemoteIP: e.RemoteIP, Outcome: e.Outcome, Detail: e.Detail,
	}
}

// limitParam reads ?limit=, between 1 and most, def when absent.
func limitParam(r *http.Request, def, most int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, apierror.InvalidRequest("invalid_limit", "limit must be a whole number from 1 to "+strconv.Itoa(most)+".")
	}
	return n, nil
}

// timeJSON is how the admin API writes times: RFC 3339 in UTC, "" for
// the zero time.
func timeJSON(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
