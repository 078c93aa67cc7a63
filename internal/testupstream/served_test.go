package testupstream

import (
	"bufio"
	"context"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitServed waits until n completions have been recorded as served: a
// handler records its answer when it returns, which may be after the
// client has read all of it.
func waitServed(t *testing.T, s *Server, n int) []demobackend.Served {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := s.Served(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d completions served, want %d", len(s.Served()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServedCountsWholeAnswers(t *testing.T) {
	s := Start(t, demobackend.Options{})
	s.Enqueue(Text("one two three"), demobackend.Reply{Content: "four five", Usage: &demobackend.Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}})
	io.Copy(io.Discard, post(t, s, "/v1/chat/completions", chatBody("x", false)).Body)
	io.Copy(io.Discard, post(t, s, "/v1/chat/completions", chatBody("x", true)).Body)

	got := waitServed(t, s, 2)
	json, stream := got[0], got[1]
	if json.Stream {
		json, stream = stream, json
	}
	if json.Stream || !json.Complete || !json.Reported || json.Generated != 3 || json.SentTokens != 3 || json.Usage.CompletionTokens != 3 {
		t.Errorf("JSON answer served as %+v", json)
	}
	if !stream.Stream || !stream.Complete || stream.Reported || stream.Generated != 2 || stream.SentTokens != 2 || stream.Usage.PromptTokens != 7 {
		t.Errorf("stream served as %+v", stream)
	}
	if json.Request.Chat == nil || stream.Request.Chat == nil {
		t.Error("a served completion lacks its decoded request")
	}
	for _, sv := range got {
		if sv.Started.IsZero() || sv.LastToken.Before(sv.Started) || sv.LastWrite.Before(sv.LastToken) || sv.Ended.Before(sv.LastWrite) {
			t.Errorf("times out of order: %v %v %v %v", sv.Started, sv.LastToken, sv.LastWrite, sv.Ended)
		}
		if sv.Stream && !sv.LastToken.Before(sv.LastWrite) {
			t.Errorf("a stream's last token went out with its last write: %v", sv.LastToken)
		}
	}
	if n, p, c := s.ServedTotals(); n != 2 || p != int64(json.Usage.PromptTokens+7) || c != 5 {
		t.Errorf("totals %d completions, %d + %d tokens", n, p, c)
	}
}

func TestServedCountsAbandonedAndCutAnswers(t *testing.T) {
	s := Start(t, demobackend.Options{InterTokenDelay: 20 * time.Millisecond})
	text := strings.Repeat(" word", 100)
	s.Enqueue(Text(text))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(chatBody("x", true)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Leave once a token has arrived: the role chunk before it is none.
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.Contains(lines.Text(), "word") {
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	left := waitServed(t, s, 1)[0]
	if left.Complete || left.Generated != 100 || left.SentTokens < 1 || left.SentTokens >= 100 || left.Usage.CompletionTokens != 100 {
		t.Errorf("a stream the client left served as %+v", left)
	}

	s.Reset()
	s.Enqueue(demobackend.Reply{Content: "a b c d e", BreakAfter: 3}, Error(500, ""), demobackend.Reply{Content: "cut", BreakAfter: 1})
	io.Copy(io.Discard, post(t, s, "/v1/chat/completions", chatBody("x", true)).Body)
	io.Copy(io.Discard, post(t, s, "/v1/chat/completions", chatBody("x", false)).Body)
	io.Copy(io.Discard, post(t, s, "/v1/chat/completions", chatBody("x", false)).Body)
	got := waitServed(t, s, 2)
	time.Sleep(50 * time.Millisecond) // a third, wrongly recorded, would show
	if got = s.Served(); len(got) != 2 {
		t.Fatalf("%d served after a cut stream, a refusal and a cut JSON answer, want 2: %+v", len(got), got)
	}
	for _, sv := range got {
		if sv.Complete {
			t.Errorf("a cut answer served as complete: %+v", sv)
		}
		if sv.Stream && sv.SentTokens != 2 {
			t.Errorf("a stream cut after 3 frames sent %d tokens, want 2", sv.SentTokens)
		}
		if !sv.Stream && sv.SentTokens != 0 {
			t.Errorf("a JSON answer cut half way counts %d tokens sent", sv.SentTokens)
		}
	}
}
