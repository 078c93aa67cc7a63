package demobackend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const testKey = "sk-test-upstream-key"

// newClient is the official client pointed at s, without retries so
// that scripted failures surface as they are.
func newClient(s *testServer) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(s.URL()),
		option.WithAPIKey(testKey),
		option.WithMaxRetries(0),
	)
}

// post sends body to path with the test key and returns the response.
func post(t *testing.T, s *testServer, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.URL(), "/v1")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseData returns the data payloads of an event stream in order, and
// whether the read ended cleanly.
func sseData(r io.Reader) (frames []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			frames = append(frames, data)
		}
	}
	return frames, sc.Err()
}

// decode unmarshals a JSON frame into a generic map for shape checks.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("frame %q: %v", s, err)
	}
	return m
}

// errorEnvelope decodes an error body.
func errorEnvelope(t *testing.T, body io.Reader) (typ, code, message string) {
	t.Helper()
	var env struct {
		Error struct{ Type, Code, Message string } `json:"error"`
	}
	if err := json.NewDecoder(body).Decode(&env); err != nil {
		t.Fatalf("error body is not an envelope: %v", err)
	}
	return env.Error.Type, env.Error.Code, env.Error.Message
}

// testServer is a Server on a test listener that answers chat requests
// from a queue of replies, then with the demo answer, and records every
// request: the few parts of internal/testupstream these tests need (that
// package builds on this one, so these tests cannot use it).
type testServer struct {
	*Server
	url string

	mu       sync.Mutex
	queue    []Reply
	requests []Request
}

func start(t *testing.T, opts Options) *testServer {
	t.Helper()
	s := &testServer{}
	opts.Answer = func(*Request) (Reply, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.queue) == 0 {
			return Reply{}, false
		}
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r, true
	}
	opts.Observe = func(r Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, r)
	}
	s.Server = New(opts)
	// Cancelled before Close, so that a handler waiting out a long Delay
	// or TimeToFirstToken does not hold the test's cleanup up.
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewUnstartedServer(s.Server)
	ts.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	ts.Start()
	t.Cleanup(func() {
		cancel()
		ts.Close()
	})
	s.url = ts.URL + "/v1"
	return s
}

func (s *testServer) URL() string { return s.url }

func (s *testServer) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

func (s *testServer) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *testServer) ChatRequests() []*ChatRequest {
	var out []*ChatRequest
	for _, r := range s.Requests() {
		if r.Chat != nil {
			out = append(out, r.Chat)
		}
	}
	return out
}

func textReply(s string) Reply                 { return Reply{Content: s} }
func toolCalls(calls ...ToolCall) Reply        { return Reply{ToolCalls: calls} }
func errorReply(status int, body string) Reply { return Reply{Status: status, Body: body} }
