package admin

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
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

// Bounds of the values an audit entry and its log line hold. A path
// segment, a label or a token's claim can be as long as the request
// that carries it; the record of it need not be.
const (
	maxAuditValue = 200 // runes of subject, account, target and detail
	maxAuditWord  = 64  // runes of role, action, outcome and address
	maxLoggedPath = 200 // runes of a path in a log line
)

// clipEntry bounds every value of e, marking a cut with "…".
func clipEntry(e storage.AuditEntry) storage.AuditEntry {
	for _, f := range []*string{&e.Subject, &e.Account, &e.Target, &e.Detail} {
		*f = clip.Ellipsis(*f, maxAuditValue)
	}
	for _, f := range []*string{&e.Role, &e.Action, &e.Outcome, &e.RemoteIP} {
		*f = clip.Ellipsis(*f, maxAuditWord)
	}
	return e
}

// audit stores e, stamped with the request's client address, and logs
// it. A store failure is logged loudly but does not undo the action: the
// log line is then the record. A refusal (an outcome other than "ok")
// goes through h.refusals, which writes the first of a flood and counts
// the rest.
func (h *Handler) audit(r *http.Request, e storage.AuditEntry) {
	e.RemoteIP = h.cfg.ClientIP(r)
	if e.Outcome != "ok" {
		h.refused(r, e, true)
		return
	}
	h.write(clipEntry(e), true)
}

// refused records a refused request: in the audit log and the server log
// when stored, else (no genuine token) in the server log only. Its source
// is the token's subject, or the client address without one.
func (h *Handler) refused(r *http.Request, e storage.AuditEntry, stored bool) {
	e.RemoteIP = h.cfg.ClientIP(r)
	e = clipEntry(e)
	source := "addr:" + h.cfg.AddressKey(r)
	if e.Subject != "" {
		source = "sub:" + e.Subject
	}
	h.refusals.record(source, e, stored)
	h.startFlusher.Do(func() { go h.flushRefusals() })
}

// write stores e, when stored, and logs it. Its values are already
// clipped.
func (h *Handler) write(e storage.AuditEntry, stored bool) {
	fields := []zap.Field{
		zap.String("subject", e.Subject), zap.String("role", e.Role), zap.String("action", e.Action),
		zap.String("account", e.Account), zap.String("target", e.Target), zap.String("remote_ip", e.RemoteIP),
		zap.String("outcome", e.Outcome), zap.String("detail", e.Detail),
	}
	if !stored {
		h.cfg.Logger.Info("admin request refused", fields...)
		return
	}
	// The action recorded has happened even when the client has gone.
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	out, err := h.cfg.Store.AppendAudit(ctx, e)
	if err != nil {
		h.cfg.Logger.Error("admin audit entry not stored", append(fields, zap.Error(err))...)
		return
	}
	h.cfg.Logger.Info("admin audit", append(fields, zap.String("audit_id", out.ID))...)
}

// flushRefusals writes the summaries of refusal floods as their
// intervals end, until Close. It starts with the first refusal, so that
// a gateway whose admin API refuses nothing runs no goroutine for it.
func (h *Handler) flushRefusals() {
	defer close(h.stopped)
	t := time.NewTicker(h.cfg.RefusalInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.flushSafely(false)
		}
	}
}

// flushSafely flushes the refusal summaries; a panic in writing them is
// logged with its stack and does not end the goroutine or the process.
func (h *Handler) flushSafely(all bool) {
	defer func() {
		if v := recover(); v != nil {
			h.cfg.Logger.Error("writing admin refusal summaries panicked", zap.Any("panic", v), zap.Stack("stack"))
		}
	}()
	h.refusals.flush(h.cfg.Now(), all)
}

// Close writes the summaries of the refusals counted so far and stops
// the goroutine that writes them. Requests served after Close are still
// recorded, with their summaries written at the next Close. Closing
// twice is harmless.
func (h *Handler) Close() error {
	h.closeOnce.Do(func() {
		close(h.stop)
		started := true
		h.startFlusher.Do(func() { started = false })
		if started {
			<-h.stopped
		}
	})
	h.flushSafely(true)
	return nil
}

// auditJSON is an audit entry as GET /admin/audit lists it.
type auditJSON struct {
	ID       string `json:"id"`
	At       int64  `json:"created_at"`
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
// ?limit=&after=&account=. Audit ids start with their time, so an id is
// its own cursor whether or not it names an entry.
func (q *request) auditLog() {
	if !q.operatorOnly("audit.read") {
		return
	}
	p, err := pageParams(q.r, hasPrefixID("aud_"))
	if err != nil {
		q.fail(err)
		return
	}
	entries, err := q.h.cfg.Store.AuditEntries(q.ctx, storage.AuditQuery{
		Account: q.r.URL.Query().Get("account"), Before: p.after, Limit: p.limit + 1,
	})
	if err != nil {
		q.fail(err)
		return
	}
	entries, more := trim(entries, p.limit)
	q.reply(http.StatusOK, pageEach(entries, more, auditOut, func(e storage.AuditEntry) string { return e.ID }))
}

func auditOut(e storage.AuditEntry) auditJSON {
	return auditJSON{
		ID: e.ID, At: unixTime(e.At), Subject: e.Subject, Role: e.Role, Action: e.Action,
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
