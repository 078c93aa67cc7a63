package caddymodules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// roundTrips counts what a Redis client sends: one per command, one per
// pipeline; a new connection's setup (HELLO, CLIENT) is no round trip of
// a request.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "hello" && cmd.Name() != "client" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// countedBody is a request body that counts the bytes read from it.
type countedBody struct {
	r    io.Reader
	read atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (b *countedBody) Close() error { return nil }

// admissionLimiters are the two limiters the admission step runs on:
// in process, and Redis on a client whose round trips are counted (nil
// for the in-process one).
func admissionLimiters(t *testing.T) map[string]func(t *testing.T) (limits.Limiter, *roundTrips) {
	return map[string]func(t *testing.T) (limits.Limiter, *roundTrips){
		"local": func(t *testing.T) (limits.Limiter, *roundTrips) {
			return limits.NewLocal(limits.LocalConfig{}), nil
		},
		"redis": func(t *testing.T) (limits.Limiter, *roundTrips) {
			url, prefix := testenv.Redis(t)
			opts, err := limits.RedisOptions(url)
			if err != nil {
				t.Fatal(err)
			}
			c := redis.NewClient(opts)
			t.Cleanup(func() { c.Close() })
			trips := new(roundTrips)
			c.AddHook(trips)
			// A loaded machine's Redis answers within 2s; the admissions
			// here must not fall back to the in-process limits.
			l, err := limits.NewRedis(limits.RedisConfig{Client: c, Prefix: prefix, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return l, trips
		},
	}
}

// admissionHandler is switchyard_limits on an app of its own with lim and
// prof, as Provision would set it up.
func admissionHandler(lim limits.Limiter, prof policy.Profile) *Limits {
	app := &App{settings: node.Settings{Profile: prof}, limiter: lim, admission: newAdmission(&limits.Config{})}
	return &Limits{appHandler{app: app, logger: zap.NewNop()}}
}

// admissionRequest is a request of p as switchyard_auth hands it on,
// with body (nil: none) counted.
func admissionRequest(method, path string, p policy.Principal, body string) (*http.Request, *countedBody) {
	var cb *countedBody
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		cb = &countedBody{r: strings.NewReader(body)}
		r = httptest.NewRequest(method, path, cb)
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "application/json")
	}
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	return r.WithContext(policy.WithPrincipal(ctx, p)), cb
}

const (
	admissionChat   = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	admissionStream = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
)

// TestAdmissionIsOneRoundTrip: a request admitted with its body, a
// stream with its slot and hold included, costs one round trip to Redis;
// so does one without a body.
func TestAdmissionIsOneRoundTrip(t *testing.T) {
	lim, trips := admissionLimiters(t)["redis"](t)
	h := admissionHandler(lim, policy.ProfileFor(policy.RevisionB))
	p := policy.Principal{KeyID: "key_trips", AccountID: "acct_trips", BalanceCents: 10_000}
	// The scripts are loaded, as by any earlier request: a Redis that
	// lost them costs one more round trip to load them again.
	warm, err := lim.Admit(context.Background(), limits.AdmitRequest{Key: "warm", WantLease: true, StreamLimit: 1,
		Reserve: limits.Reservation{Account: "warm", Balance: 1, Want: 1}})
	if err != nil {
		t.Fatal(err)
	}
	warm.Lease.Release()
	warm.Hold.Release()
	lim.(*limits.Redis).Flush()
	for _, tc := range []struct{ name, method, path, body string }{
		{"a JSON request", "POST", "/v1/chat/completions", admissionChat},
		{"a stream", "POST", "/v1/chat/completions", admissionStream},
		{"a read", "GET", "/v1/models", ""},
	} {
		r, _ := admissionRequest(tc.method, tc.path, p, tc.body)
		before := trips.n.Load()
		ad, err := h.admit(httptest.NewRecorder(), r, stateOf(r.Context()), p)
		n := trips.n.Load() - before
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n != 1 {
			t.Errorf("%s: admitted with %d round trips to Redis, want 1", tc.name, n)
		}
		if tc.body == admissionStream && (ad.lease == nil || ad.hold == nil) {
			t.Errorf("%s: admitted with lease %v and hold %v, want both", tc.name, ad.lease, ad.hold)
		}
		ad.release()
		lim.(*limits.Redis).Flush()
	}
}

// TestAdmissionRefusesBeforeTheBody: a key whose account has nothing,
// and a key whose rate the node knows spent, are refused without a byte
// of their body read and, with Redis, without a round trip; a key whose
// rate was spent elsewhere has its body read and is refused by the one
// admission after it.
func TestAdmissionRefusesBeforeTheBody(t *testing.T) {
	for name, newLimiter := range admissionLimiters(t) {
		t.Run(name, func(t *testing.T) {
			lim, trips := newLimiter(t)
			prof := policy.ProfileFor(policy.RevisionB)
			prof.RequestsPerPeriod = 1
			h := admissionHandler(lim, prof)
			tripsOf := func() int64 {
				if trips == nil {
					return 0
				}
				return trips.n.Load()
			}

			broke := policy.Principal{KeyID: "key_broke", AccountID: "acct_broke", BalanceCents: 0}
			r, body := admissionRequest("POST", "/v1/chat/completions", broke, admissionChat)
			before := tripsOf()
			_, err := h.admit(httptest.NewRecorder(), r, stateOf(r.Context()), broke)
			wantRefusal(t, "a zero balance", err, http.StatusPaymentRequired, "insufficient_balance")
			if body.read.Load() != 0 || tripsOf() != before {
				t.Errorf("a zero balance: %d bytes of the body read, %d round trips; want none", body.read.Load(), tripsOf()-before)
			}

			busy := policy.Principal{KeyID: "key_busy", AccountID: "acct_busy", BalanceCents: 10_000}
			r, _ = admissionRequest("POST", "/v1/chat/completions", busy, admissionChat)
			ad, err := h.admit(httptest.NewRecorder(), r, stateOf(r.Context()), busy)
			if err != nil {
				t.Fatalf("the key's one request: %v", err)
			}
			ad.release()
			for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
				r, body = admissionRequest("POST", path, busy, admissionChat)
				w := httptest.NewRecorder()
				before = tripsOf()
				_, err = h.admit(w, r, stateOf(r.Context()), busy)
				wantRefusal(t, path+" past the rate", err, http.StatusTooManyRequests, "rate_limit_exceeded")
				if body.read.Load() != 0 || tripsOf() != before {
					t.Errorf("%s past the rate: %d bytes of the body read, %d round trips; want none", path, body.read.Load(), tripsOf()-before)
				}
				if w.Header().Get("X-Ratelimit-Remaining-Requests") != "0" {
					t.Errorf("%s past the rate: headers %v, want none remaining", path, w.Header())
				}
			}
		})
	}
}

// TestAdmissionOfARateSpentElsewhere: with Redis, a key whose rate
// another node spent is not known spent here: its body is read, and the
// one admission after it refuses it; from then on this node refuses the
// key before the body too.
func TestAdmissionOfARateSpentElsewhere(t *testing.T) {
	url, prefix := testenv.Redis(t)
	opts, err := limits.RedisOptions(url)
	if err != nil {
		t.Fatal(err)
	}
	node := func() limits.Limiter {
		c := redis.NewClient(opts)
		t.Cleanup(func() { c.Close() })
		l, err := limits.NewRedis(limits.RedisConfig{Client: c, Prefix: prefix, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	prof := policy.ProfileFor(policy.RevisionB)
	prof.RequestsPerPeriod = 1
	here, elsewhere := admissionHandler(node(), prof), admissionHandler(node(), prof)
	p := policy.Principal{KeyID: "key_roaming", AccountID: "acct_roaming", BalanceCents: 10_000}
	r, _ := admissionRequest("GET", "/v1/models", p, "")
	if _, err := elsewhere.admit(httptest.NewRecorder(), r, stateOf(r.Context()), p); err != nil {
		t.Fatal(err)
	}
	for i, wantRead := range []bool{true, false} {
		r, body := admissionRequest("POST", "/v1/chat/completions", p, admissionChat)
		_, err := here.admit(httptest.NewRecorder(), r, stateOf(r.Context()), p)
		wantRefusal(t, "past the rate", err, http.StatusTooManyRequests, "rate_limit_exceeded")
		if read := body.read.Load() > 0; read != wantRead {
			t.Errorf("request %d past the rate: body read %v, want %v", i+1, read, wantRead)
		}
	}
}

func wantRefusal(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code {
		t.Fatalf("%s: %v, want %d %s", what, err, status, code)
	}
}

// TestAdmissionRefusedBodySpendsTheRate: a body the gateway refuses
// spends one request of its key's rate, so that a client cannot have
// bodies read and refused without end; once that spends the rate, the
// next request is refused before its body.
func TestAdmissionRefusedBodySpendsTheRate(t *testing.T) {
	for name, newLimiter := range admissionLimiters(t) {
		t.Run(name, func(t *testing.T) {
			lim, _ := newLimiter(t)
			prof := policy.ProfileFor(policy.RevisionB)
			prof.RequestsPerPeriod = 2
			h := admissionHandler(lim, prof)
			p := policy.Principal{KeyID: "key_junk", AccountID: "acct_junk", BalanceCents: 10_000}
			for i := range 2 {
				r, _ := admissionRequest("POST", "/v1/chat/completions", p, `{"model":`)
				w := httptest.NewRecorder()
				_, err := h.admit(w, r, stateOf(r.Context()), p)
				wantRefusal(t, "a broken body", err, http.StatusBadRequest, "invalid_json")
				if got, want := w.Header().Get("X-Ratelimit-Remaining-Requests"), fmt.Sprint(1-i); got != want {
					t.Errorf("broken body %d: %q remaining, want %s", i+1, got, want)
				}
			}
			r, body := admissionRequest("POST", "/v1/chat/completions", p, admissionChat)
			_, err := h.admit(httptest.NewRecorder(), r, stateOf(r.Context()), p)
			wantRefusal(t, "after two broken bodies", err, http.StatusTooManyRequests, "rate_limit_exceeded")
			if body.read.Load() != 0 {
				t.Errorf("after two broken bodies: %d bytes of the body read, want none", body.read.Load())
			}
		})
	}
}
