package billing

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

func TestRoutesBodyMeter(t *testing.T) {
	rt := Routes{Chat: "/v3/chat/completions", Uploads: []string{"/v3/files"}, Responses: []string{"/v1/responses"}}
	for _, tt := range []struct {
		name, method, path string
		want               BodyMeter
	}{
		{"chat", "POST", "/v3/chat/completions", ChatJSON},
		{"chat in capitals", "POST", "/V3/Chat/Completions", ChatJSON},
		{"v1 chat", "POST", "/v1/chat/completions", V1JSON},
		{"upload", "POST", "/v3/files", Upload},
		{"upload with a trailing slash", "POST", "/v3/files/", Upload},
		{"a PUT to the upload path is no upload", "PUT", "/v3/files", V1JSON},
		{"a PUT to the chat path is no chat", "PUT", "/v3/chat/completions", V1JSON},
		{"an unknown route is read strictly", "POST", "/v1/audio/transcriptions", V1JSON},
		{"an unknown method is read strictly", "PATCH", "/v1/chat/completions", V1JSON},
		{"a method in lower case is not GET", "get", "/v1/models", V1JSON},
		{"responses", "POST", "/v1/responses", V1Responses},
		{"responses in capitals", "POST", "/V1/Responses/", V1Responses},
		{"below responses is no Responses body", "POST", "/v1/responses/resp_1/cancel", V1JSON},
		{"reading a stored response", "GET", "/v1/responses/resp_1", NoBody},
		{"reads", "GET", "/v3/files", NoBody},
		{"deletes", "DELETE", "/v3/files/file-1", NoBody},
		{"HEAD", "HEAD", "/v1/models", NoBody},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rt.BodyMeter(tt.method, tt.path); got != tt.want {
				t.Errorf("Meter(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
			}
		})
	}
}

func TestMeterChargeable(t *testing.T) {
	for m, want := range map[BodyMeter]bool{NoBody: false, V1JSON: true, ChatJSON: true, Upload: false, V1Responses: true} {
		if m.Chargeable() != want {
			t.Errorf("%v.Chargeable() = %v", m, !want)
		}
	}
}

func TestV1RouteMeter(t *testing.T) {
	for route, want := range map[string]bool{
		"POST /chat/completions":        true,
		"POST /embeddings":              true,
		"GET /models/*":                 true,
		"GET /batches":                  true, // no body: no meter needed
		"DELETE /files/*":               true,
		"POST /audio/transcriptions":    false,
		"POST /responses":               true,
		"POST /responses/*/cancel":      false,
		"PUT /chat/completions":         false,
		"PATCH /fine_tuning/jobs/*":     false,
		"POST /chat/completions/extras": false,
	} {
		if _, ok := V1RouteMeter(route); ok != want {
			t.Errorf("V1RouteMeter(%q) ok = %v, want %v", route, ok, want)
		}
	}
}

func TestCheckBody(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		meter   BodyMeter
		header  http.Header
		hasBody bool
		refused bool
	}{
		{"JSON", V1JSON, h("Content-Type", "application/json"), true, false},
		{"JSON, UTF-8", ChatJSON, h("Content-Type", "application/json; charset=utf-8"), true, false},
		{"identity encoding", V1JSON, h("Content-Type", "application/json", "Content-Encoding", "identity"), true, false},
		{"no body, no label", V1JSON, h(), false, false},
		{"multipart to a JSON route", V1JSON, h("Content-Type", "multipart/form-data; boundary=x"), true, true},
		{"multipart to chat", ChatJSON, h("Content-Type", "multipart/form-data; boundary=x"), true, true},
		{"no label", V1JSON, h(), true, true},
		{"gzip", V1JSON, h("Content-Type", "application/json", "Content-Encoding", "gzip"), true, true},
		{"gzip after identity", V1JSON, h("Content-Type", "application/json", "Content-Encoding", "identity", "Content-Encoding", "gzip"), true, true},
		{"two labels", V1JSON, h("Content-Type", "application/json", "Content-Type", "multipart/form-data; boundary=x"), true, true},
		{"upload", Upload, h("Content-Type", "multipart/form-data; boundary=x"), true, false},
		{"JSON upload", Upload, h("Content-Type", "application/json"), true, true},
		{"a body on a route without one", NoBody, h("Content-Type", "application/json"), true, true},
		{"no body on a route without one", NoBody, h(), false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBody(tt.meter, "POST", "/v1/chat/completions", tt.header, tt.hasBody)
			if (err != nil) != tt.refused {
				t.Fatalf("CheckBody = %v, want refused %v", err, tt.refused)
			}
			if err != nil && (err.Status != http.StatusUnsupportedMediaType || err.Code != "unsupported_media_type" || err.Type != "invalid_request_error") {
				t.Fatalf("refusal %d %s %s", err.Status, err.Code, err.Type)
			}
		})
	}
}

func TestAdmitRequests(t *testing.T) {
	prof := policy.ProfileFor(policy.RevisionB)
	p := policy.Principal{KeyID: "key_1", AccountID: "acct_1", BalanceCents: 500}
	body, err := ParseV1([]byte(`{"model":"m","stream":true,"max_tokens":100,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("before the body: the rate, and a balance check on a chargeable route", func(t *testing.T) {
		req := BeforeBody(prof, p, V1JSON)
		if req.Key != "key_1" || req.Rate != limits.RateFor(prof) || req.WantLease {
			t.Errorf("req %+v", req)
		}
		if r := req.Reserve; r.Account != "acct_1" || r.Balance != 500 || r.Min != prof.MinChargeCents || !r.CheckOnly {
			t.Errorf("reserve %+v, want a check of the minimum", r)
		}
		for _, m := range []BodyMeter{NoBody, Upload} {
			if req := BeforeBody(prof, p, m); req.Reserve.Account != "" || req.Rate != limits.RateFor(prof) {
				t.Errorf("%v: %+v, want the rate alone", m, req)
			}
		}
	})
	t.Run("after the body: the rate, a slot and the estimate held, in one step", func(t *testing.T) {
		req, ok := AfterBody(prof, p, AskV1(body))
		if !ok || req.Key != "key_1" || !req.WantLease || req.StreamLimit != prof.ConcurrentStreams || req.Rate != limits.RateFor(prof) {
			t.Errorf("req %+v", req)
		}
		want := HoldEstimate(prof.ForModel("m"), int64(len(body.Body)), 100, DefaultHoldTokens)
		if r := req.Reserve; r.Account != "acct_1" || r.Balance != 500 || r.Want != want || r.Min != prof.MinChargeCents || r.CheckOnly {
			t.Errorf("reserve %+v, want %d held", r, want)
		}
	})
	t.Run("the hold does not depend on the label, only on the route", func(t *testing.T) {
		ask := AskV1(body)
		ask.Meter = Upload
		if req, _ := AfterBody(prof, p, ask); req.Reserve.Account != "" {
			t.Errorf("an upload holds %+v", req.Reserve)
		}
	})
}

func TestRefusal(t *testing.T) {
	prof := policy.ProfileFor(policy.RevisionB)
	lim := limits.NewLocal(limits.LocalConfig{})
	ctx := context.Background()
	broke := policy.Principal{KeyID: "k", AccountID: "broke", BalanceCents: 0}
	_, err := lim.Admit(ctx, BeforeBody(prof, broke, V1JSON))
	if e := Refusal(err, 0); e == nil || e.Status != http.StatusPaymentRequired || e.Code != "insufficient_balance" {
		t.Fatalf("empty account: %v", e)
	}
	// A balance held by a request in flight is told apart from one spent.
	rich := policy.Principal{KeyID: "k2", AccountID: "held", BalanceCents: prof.MinChargeCents}
	after, _ := AfterBody(prof, rich, Ask{Meter: V1JSON})
	adm, err := lim.Admit(ctx, after)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Hold.Release()
	_, err = lim.Admit(ctx, BeforeBody(prof, rich, V1JSON))
	e := Refusal(err, rich.BalanceCents)
	if e == nil || e.Code != "insufficient_balance" || !strings.Contains(e.Message, "held by requests in flight") {
		t.Fatalf("held balance: %v", e)
	}
}

func TestCheckQuery(t *testing.T) {
	for _, tt := range []struct {
		name     string
		m        BodyMeter
		rawQuery string
		refused  bool
	}{
		{"a /v1 body without a query", V1JSON, "", false},
		{"a /v1 body with a query", V1JSON, "max_tokens=100000", true},
		{"a Responses body with a query", V1Responses, "stream=true", true},
		{"a /v1 body with a malformed query", V1JSON, "%zz", true},
		{"a read keeps its query", NoBody, "limit=5", false},
		{"the /v3 chat reads no query upstream", ChatJSON, "x=1", false},
		{"an upload reads no query upstream", Upload, "purpose=assistants", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckQuery(tt.m, "POST", "/v1/chat/completions", tt.rawQuery)
			if (err != nil) != tt.refused {
				t.Fatalf("CheckQuery = %v, want refused %v", err, tt.refused)
			}
			if err != nil && (err.Status != http.StatusBadRequest || err.Code != "unsupported_parameter" || !strings.Contains(err.Message, tt.rawQuery)) {
				t.Errorf("refusal %d %s %q", err.Status, err.Code, err.Message)
			}
		})
	}
}
