package caddymodules

import (
	"context"
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/telemetry"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/policy"
)

// activityVar holds the *billing.Activity of an authenticated request:
// its request log entry (docs/admin.md, "Activity").
const activityVar = "switchyard.activity"

// startActivity starts the request log entry of r, authenticated as p.
func startActivity(r *http.Request, w http.ResponseWriter, ledger *billing.LedgerWriter, requestID string, p policy.Principal) {
	if ledger == nil {
		return
	}
	caddyhttp.SetVar(r.Context(), activityVar,
		billing.NewActivity(ledger, receivedAt(w), requestID, p.AccountID, p.KeyID, r.Header.Get("X-User-Id"), r.Method, r.URL.Path))
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

// activityOf is the request log entry of the request of ctx; nil for a
// request that was not authenticated.
func activityOf(ctx context.Context) *billing.Activity {
	a, _ := caddyhttp.GetVar(ctx, activityVar).(*billing.Activity)
	return a
}

// finishActivity queues r's entry with the status and error code it
// ended with.
func finishActivity(r *http.Request, w *telemetry.Writer, status int, code, upstream string) {
	a := activityOf(r.Context())
	if a == nil {
		return
	}
	if code == telemetry.CodeNone {
		code = ""
	}
	a.Finish(billing.Outcome{Route: telemetry.RouteOf(r.URL.Path), ModelAsked: requestedModel(r), Upstream: upstream,
		Status: status, ErrorCode: code, Ended: time.Now(), FirstByte: w.FirstByte(), Stream: w.Streaming()})
}
