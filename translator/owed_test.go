package translator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// serveAgainst serves one /v3 request against backend with ctx as the
// client's context, and returns what was recorded for billing.
func serveAgainst(t *testing.T, ctx context.Context, backend http.HandlerFunc, stream bool) []storage.UsageRecord {
	t.Helper()
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	u, err := upstream.New(upstream.Config{BaseURL: srv.URL + "/v1", Model: "m", FirstByteTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	rec := &fakeRecorder{}
	profile := policy.ProfileFor(policy.RevisionB)
	o, err := New(Config{Upstream: u, Profile: profile, Usage: rec})
	if err != nil {
		t.Fatal(err)
	}
	req, err := request.Parse([]byte(chatBody(stream, "Tell me about the harbour.", "")), http.Header{}, request.Limits{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	o.Serve(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "POST", "/", nil), req, Caller{AccountID: "a", KeyID: "k"})
	return rec.all()
}

// A client that leaves once its round went out owes the prompt: the
// backend has it and may be working on it, as the /v1 meter holds of
// such a request too.
func TestClientGoneBeforeTheAnswerIsCharged(t *testing.T) {
	for _, stream := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		recs := serveAgainst(t, ctx, func(w http.ResponseWriter, r *http.Request) {
			// The server notices a closed connection only once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			cancel() // the client leaves as the backend starts on the round
			<-r.Context().Done()
		}, stream)
		if len(recs) != 1 {
			t.Fatalf("stream %v: %d usage records, want 1", stream, len(recs))
		}
		if r := recs[0]; !r.Estimated || r.PromptTokens == 0 || r.Outcome != storage.OutcomeClientGone {
			t.Errorf("stream %v: record %+v, want an estimated prompt, client gone", stream, r)
		}
	}
}

// A backend that accepts a round and ends its stream before any token or
// usage still read the prompt.
func TestEmptyAnswerIsCharged(t *testing.T) {
	recs := serveAgainst(t, context.Background(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"))
	}, true)
	if len(recs) != 1 || !recs[0].Estimated || recs[0].PromptTokens == 0 {
		t.Fatalf("records %+v, want one estimated charge of the prompt", recs)
	}
}
