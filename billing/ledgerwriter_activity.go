package billing

import (
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// Activity gathers one request's request log entry while its handlers
// run: who made it when it is authenticated, its charge when it is
// settled, and its outcome when it ends. Finish hands the entry to the
// ledger writer. An Activity not started and a nil one do nothing; it is
// safe for concurrent use.
type Activity struct {
	mu       sync.Mutex
	writer   *LedgerWriter
	entry    storage.RequestLogEntry
	finished bool
}

// maxLoggedText bounds the strings a client chooses (the model asked
// for, the end user, the path) as the log keeps them.
const maxLoggedText = 256

// Start starts a's entry of an authenticated request, received at at,
// which Finish hands to w: in place, so that a request's activity can
// be part of a value its handlers keep anyway. endUser is the one the
// request's headers name, until its charge names one. A second Start
// begins a new entry, to be finished once again.
func (a *Activity) Start(w *LedgerWriter, at time.Time, requestID, accountID, keyID, endUser, method, path string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writer, a.finished = w, false
	a.entry = storage.RequestLogEntry{
		At: at, RequestID: requestID, AccountID: accountID, KeyID: keyID, EndUser: clipText(endUser),
		Method: method, Path: clipText(path),
	}
}

// Charged adds the request's usage record and its price.
func (a *Activity) Charged(rec storage.UsageRecord, cents int64) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e := &a.entry
	e.ChargeID, e.ModelServed, e.Upstream = rec.RequestID, clipText(rec.Model), rec.Upstream
	if rec.EndUser != "" {
		e.EndUser = clipText(rec.EndUser)
	}
	e.Stream, e.Estimated, e.ToolCalls = rec.Stream, rec.Estimated, rec.ToolCalls
	e.PromptTokens, e.CompletionTokens, e.CostCents = rec.PromptTokens, rec.CompletionTokens, cents
}

// Outcome is how a request ended, as the log keeps it.
type Outcome struct {
	Route      string
	ModelAsked string
	Upstream   string // when the charge did not name one
	Status     int
	ErrorCode  string
	Ended      time.Time
	FirstByte  time.Time // zero when the body was empty
	Stream     bool
}

// Finish completes the entry with o and queues it on the writer, once;
// later calls do nothing.
func (a *Activity) Finish(o Outcome) {
	if a == nil || a.writer == nil {
		return
	}
	a.mu.Lock()
	if a.finished {
		a.mu.Unlock()
		return
	}
	a.finished = true
	e := a.entry
	a.mu.Unlock()
	e.Route, e.ModelAsked, e.Status, e.ErrorCode = o.Route, clipText(o.ModelAsked), o.Status, o.ErrorCode
	if e.Upstream == "" {
		e.Upstream = o.Upstream
	}

	e.Stream = e.Stream || o.Stream
	e.Latency = max(o.Ended.Sub(e.At), 0)
	if !o.FirstByte.IsZero() {
		e.FirstByte = max(o.FirstByte.Sub(e.At), 0)
	}
	a.writer.Log(e)
}

func clipText(s string) string {
	if len(s) <= maxLoggedText {
		return s
	}
	// Back off to the start of a UTF-8 sequence.
	n := maxLoggedText
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
