package caddymodules

import (
	"context"
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/telemetry"
)

// startActivity starts the request log entry of r, authenticated as p.
func startActivity(r *http.Request, w http.ResponseWriter, ledger *billing.LedgerWriter, requestID string, p policy.Principal) {
	if ledger == nil {
		return
	}
	stateOf(r.Context()).activity.Start(ledger, receivedAt(w), requestID, p.AccountID, p.KeyID, r.Header.Get("X-User-Id"), r.Method, r.URL.Path)
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

// activityOf is the request log entry of the request of ctx; one not
// started, which does nothing, for a request that was not authenticated.
func activityOf(ctx context.Context) *billing.Activity {
	return &stateOf(ctx).activity
}

// finishActivity queues r's entry with the status and error code it
// ended with.
func finishActivity(r *http.Request, w *telemetry.Writer, status int, code, upstream string) {
	a := activityOf(r.Context())
	if code == telemetry.CodeNone {
		code = ""
	}
	a.Finish(billing.Outcome{Route: telemetry.RouteOf(r.URL.Path), ModelAsked: requestedModel(r), Upstream: upstream,
		Status: status, ErrorCode: code, Ended: time.Now(), FirstByte: w.FirstByte(), Stream: w.Streaming()})
}
