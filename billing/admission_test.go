package billing

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

func TestAdmitRequest(t *testing.T) {
	prof := policy.ProfileFor(policy.RevisionB)
	p := policy.Principal{KeyID: "key_1", AccountID: "acct_1", BalanceCents: 500}
	body, err := ParseV1([]byte(`{"model":"m","stream":true,"max_tokens":100,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("streamed chat holds its estimate and wants a slot", func(t *testing.T) {
		req := AdmitRequest(prof, p, AskV1(http.MethodPost, "/v1/chat/completions", "application/json", body))
		if req.Key != "key_1" || !req.WantLease || req.StreamLimit != prof.ConcurrentStreams {
			t.Errorf("req %+v", req)
		}
		want := HoldEstimate(prof.ForModel("m"), int64(len(body.Body)), 100, DefaultHoldTokens)
		if req.Reserve.Account != "acct_1" || req.Reserve.Balance != 500 || req.Reserve.Want != want || req.Reserve.Min != prof.MinChargeCents {
			t.Errorf("reserve %+v, want %d held", req.Reserve, want)
		}
	})
	t.Run("no body holds the minimum charge", func(t *testing.T) {
		req := AdmitRequest(prof, p, Ask{Method: http.MethodPost, Path: "/v1/embeddings"})
		if req.WantLease || req.Reserve.Want != prof.MinChargeCents {
			t.Errorf("req %+v", req)
		}
	})
	t.Run("reads and uploads hold nothing", func(t *testing.T) {
		for _, ask := range []Ask{
			{Method: http.MethodGet, Path: "/v1/models"},
			{Method: http.MethodPost, Path: "/v3/files", ContentType: "multipart/form-data; boundary=x"},
		} {
			if req := AdmitRequest(prof, p, ask); req.Reserve.Account != "" {
				t.Errorf("%s %s holds %+v", ask.Method, ask.Path, req.Reserve)
			}
		}
	})
}

func TestRefusal(t *testing.T) {
	prof := policy.ProfileFor(policy.RevisionB)
	lim := limits.NewLocal(limits.LocalConfig{})
	ctx := context.Background()
	ask := Ask{Method: http.MethodPost, Path: "/v1/chat/completions"}
	broke := policy.Principal{KeyID: "k", AccountID: "broke", BalanceCents: 0}
	_, err := Admit(ctx, lim, prof, broke, ask)
	if e := Refusal(err, 0); e == nil || e.Status != http.StatusPaymentRequired || e.Code != "insufficient_balance" {
		t.Fatalf("empty account: %v", e)
	}
	// A balance held by a request in flight is told apart from one spent.
	rich := policy.Principal{KeyID: "k2", AccountID: "held", BalanceCents: prof.MinChargeCents}
	adm, err := Admit(ctx, lim, prof, rich, ask)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Hold.Release()
	_, err = Admit(ctx, lim, prof, rich, ask)
	e := Refusal(err, rich.BalanceCents)
	if e == nil || e.Code != "insufficient_balance" || !strings.Contains(e.Message, "held by requests in flight") {
		t.Fatalf("held balance: %v", e)
	}
}
