package caddymodules

import (
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/telemetry"
)

// startActivity starts the request log entry of r, whose state is st,
// authenticated as p.
func startActivity(st *requestState, r *http.Request, w http.ResponseWriter, ledger *billing.LedgerWriter, requestID string, p policy.Principal) {
	if ledger == nil {
		return
	}
	st.activity.Start(ledger, receivedAt(w), requestID, p.AccountID, p.KeyID, headerValue(r.Header, headerUserID), r.Method, r.URL.Path)
}

// receivedAt is when switchyard_auth's telemetry.Writer, under w's wrappers,
// saw the request; now if there is none.
func receivedAt(w http.ResponseWriter) time.Time {
	for {
		switch x := w.(type) {
		case *telemetry.Writer:
			return x.Start()
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return time.Now()
		}
	}
}

// finishActivity queues the entry of r, whose state is st, with the
// status and error code it ended with.
func finishActivity(st *requestState, r *http.Request, w *telemetry.Writer, status int, code, upstream string) {
	if code == telemetry.CodeNone {
		code = ""
	}
	st.activity.Finish(billing.Outcome{Route: telemetry.RouteOf(r.URL.Path), ModelAsked: st.requestedModel(r), Upstream: upstream,
		Status: status, ErrorCode: code, Ended: time.Now(), FirstByte: w.FirstByte(), Stream: w.Streaming()})
}
