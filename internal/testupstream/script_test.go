package testupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

func chatBody(text string, stream bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":    demobackend.DefaultModel,
		"stream":   stream,
		"messages": []map[string]any{{"role": "user", "content": text}},
	})
	return string(b)
}

// completion is the part of a chat.completion answer these tests read.
type completion struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

// contentOf returns the assistant text of a JSON answer.
func contentOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var c completion
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content == nil {
		return ""
	}
	return *c.Choices[0].Message.Content
}

// post sends body to path and returns the response.
func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(strings.TrimSuffix(s.URL(), "/v1")+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestQueueOrderAndMatchPrecedence(t *testing.T) {
	s := Start(t, demobackend.Options{})
	s.Enqueue(Text("first"), Text("second"))
	s.Match(LastUserContains("weather"), Text("sunny"))
	s.Enqueue(Text("third"))

	got := []string{
		contentOf(t, post(t, s, "/v1/chat/completions", chatBody("a", false))),
		contentOf(t, post(t, s, "/v1/chat/completions", chatBody("what's the weather", false))),
		contentOf(t, post(t, s, "/v1/chat/completions", chatBody("b", false))),
		contentOf(t, post(t, s, "/v1/chat/completions", chatBody("weather again", false))),
		contentOf(t, post(t, s, "/v1/chat/completions", chatBody("c", false))),
	}
	want := []string{"first", "sunny", "second", "sunny", "third"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("answers = %v, want %v", got, want)
	}
	if s.Pending() != 0 {
		t.Fatalf("pending = %d", s.Pending())
	}
	demo := contentOf(t, post(t, s, "/v1/chat/completions", chatBody("d", false)))
	if !strings.HasPrefix(demo, "Demo backend reply.") {
		t.Fatalf("empty queue should give the demo answer, got %q", demo)
	}
	s.Reset()
	if len(s.Requests()) != 0 {
		t.Fatal("Reset kept requests")
	}
	if got := contentOf(t, post(t, s, "/v1/chat/completions", chatBody("weather", false))); strings.Contains(got, "sunny") {
		t.Fatal("Reset kept rules")
	}
}

func TestRespondComputesReplies(t *testing.T) {
	s := Start(t, demobackend.Options{})
	s.Respond(func(r *demobackend.Request) (demobackend.Reply, bool) {
		return Text("echo: " + r.Chat.LastUserText()), LastRole("user")(r)
	})
	if got := contentOf(t, post(t, s, "/v1/chat/completions", chatBody("ping", false))); got != "echo: ping" {
		t.Fatalf("got %q", got)
	}
}

func TestRecordsRequests(t *testing.T) {
	s := Start(t, demobackend.Options{})
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.URL(), "/v1")+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"web_search"}}],"x_custom":1}`))
	req.Header.Set("Authorization", "Bearer upstream-key")
	req.Header.Set("X-Trace", "t1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := http.Get(s.URL() + "/models"); err != nil {
		t.Fatal(err)
	}

	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer upstream-key" || r.Header.Get("X-Trace") != "t1" {
		t.Fatalf("recorded %s %s %v", r.Method, r.Path, r.Header)
	}
	if r.Chat == nil || !r.Chat.HasTool("web_search") || r.Chat.HasTool("open_url") || !r.Chat.Has("x_custom") || r.Chat.Has("stream") {
		t.Fatalf("decoded chat = %+v", r.Chat)
	}
	if !strings.Contains(string(r.Body), `"x_custom":1`) {
		t.Fatalf("raw body = %s", r.Body)
	}
	if reqs[1].Method != "GET" || reqs[1].Path != "/v1/models" || reqs[1].Chat != nil {
		t.Fatalf("second request = %+v", reqs[1])
	}
	if got := len(s.ChatRequests()); got != 1 {
		t.Fatalf("ChatRequests = %d", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := Start(t, demobackend.Options{})
	const n = 20
	for i := range n {
		s.Enqueue(Text(fmt.Sprintf("r%d", i)))
	}
	var wg sync.WaitGroup
	answers := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(chatBody("x", false)))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var c completion
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
				t.Error(err)
				return
			}
			answers <- *c.Choices[0].Message.Content
			_ = s.Requests()
		})
	}
	wg.Wait()
	close(answers)
	seen := map[string]bool{}
	for a := range answers {
		if seen[a] {
			t.Fatalf("reply %q used twice", a)
		}
		seen[a] = true
	}
	if len(seen) != n || len(s.Requests()) != n {
		t.Fatalf("%d distinct replies, %d requests recorded", len(seen), len(s.Requests()))
	}
}
