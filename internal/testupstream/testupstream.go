// Package testupstream is the scripted upstream of the tests: a
// demobackend.Server whose answers a test queues or computes, and which
// records every request it receives. It is linked into test binaries
// only; the switchyard binary serves the demo backend alone.
//
//	up := testupstream.Start(t, demobackend.Options{})
//	up.Enqueue(testupstream.ToolCalls(demobackend.ToolCall{Name: "web_search", Arguments: `{"query":"go"}`}))
//	up.Enqueue(testupstream.Text("Go is a programming language."))
//	// ... point the code under test at up.URL() ...
//	reqs := up.ChatRequests()
//
// A chat request that no rule and no queued reply answers gets the demo
// answer (demobackend.DemoReply).
//
// Recordings returns the corpus of real backends' answers
// (translator/upstream/testdata/dialects); up.Enqueue(up.Replay(rec))
// answers the next chat request with one of them byte for byte.
package testupstream

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// Server is the scripted backend. It is an http.Handler; mount it at the
// root, since it answers the /v1/... paths itself. All methods are safe
// for concurrent use, also while requests are being served.
type Server struct {
	*demobackend.Server

	mu       sync.Mutex
	queue    []demobackend.Reply
	rules    []Responder
	requests []demobackend.Request
	served   []demobackend.Served
	baseURL  string
	// recordings are the answers of Replay replies, by the index their
	// reply names.
	recordings []Recording
}

// New returns a Server configured by opts, not yet listening: mount it
// on a server of the test's own. Its Answer and Observe are the script's
// and the record's; those of opts are not used.
func New(opts demobackend.Options) *Server {
	s := &Server{}
	opts.Answer = s.pick
	opts.Observe = s.record
	opts.Served = s.recordServed
	s.Server = demobackend.New(opts)
	return s
}

// Start runs a Server on a random port of 127.0.0.1 until the test ends.
// Its URL method returns the base URL to give clients.
func Start(t testing.TB, opts demobackend.Options) *Server {
	t.Helper()
	s := New(opts)
	// Cancelled before Close, so that a handler waiting out a long Delay
	// or TimeToFirstToken does not hold the test's cleanup up.
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewUnstartedServer(s)
	ts.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	ts.Start()
	t.Cleanup(func() {
		cancel()
		ts.Close()
	})
	s.mu.Lock()
	s.baseURL = ts.URL + "/v1"
	s.mu.Unlock()
	return s
}

// URL is the base URL clients use ("http://127.0.0.1:PORT/v1") of a
// server started with Start, or "" otherwise.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.baseURL
}

// Requests returns every request received so far, oldest first, the
// unauthorised and invalid ones included. The Header and Body of the
// returned values are shared with the server: read them, do not modify.
func (s *Server) Requests() []demobackend.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]demobackend.Request(nil), s.requests...)
}

// ChatRequests returns the Chat of every request that has one, oldest
// first.
func (s *Server) ChatRequests() []*demobackend.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*demobackend.ChatRequest
	for _, r := range s.requests {
		if r.Chat != nil {
			out = append(out, r.Chat)
		}
	}
	return out
}

func (s *Server) record(r demobackend.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// Text is a Reply with content s.
func Text(s string) demobackend.Reply { return demobackend.Reply{Content: s} }

// ToolCalls is a Reply that calls the given tools.
func ToolCalls(calls ...demobackend.ToolCall) demobackend.Reply {
	return demobackend.Reply{ToolCalls: calls}
}

// Error is a Reply with HTTP status and body (OpenAI's envelope for
// status when body is empty).
func Error(status int, body string) demobackend.Reply {
	return demobackend.Reply{Status: status, Body: body}
}

// Responder decides the reply to a chat request; ok false leaves the
// request to the next rule.
type Responder func(req *demobackend.Request) (r demobackend.Reply, ok bool)

// Enqueue appends replies to the queue. Each chat completion request that
// no Match or Respond rule answers takes the next reply; when the queue is
// empty the demo answer is sent.
func (s *Server) Enqueue(replies ...demobackend.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Match answers every chat request for which pred is true with r, ahead
// of the queue. Rules are tried in the order they were added.
func (s *Server) Match(pred func(*demobackend.Request) bool, r demobackend.Reply) {
	s.Respond(func(req *demobackend.Request) (demobackend.Reply, bool) { return r, pred(req) })
}

// Respond adds a rule that computes replies, ahead of the queue.
func (s *Server) Respond(fn Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, fn)
}

// Pending is the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Reset drops queued replies, rules, recorded requests and served
// completions.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.rules, s.requests, s.served = nil, nil, nil, nil
}

// pick chooses the reply for req; ok false means no script applies.
func (s *Server) pick(req *demobackend.Request) (r demobackend.Reply, ok bool) {
	s.mu.Lock()
	rules := s.rules
	s.mu.Unlock()
	// Rules run unlocked so that a Responder may call back into s.
	for _, fn := range rules {
		if r, ok := fn(req); ok {
			return r, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return demobackend.Reply{}, false
	}
	r = s.queue[0]
	s.queue = s.queue[1:]
	return r, true
}

// Predicates for Match.

// LastUserContains matches requests whose last user message contains
// substr.
func LastUserContains(substr string) func(*demobackend.Request) bool {
	return func(r *demobackend.Request) bool {
		return r.Chat != nil && strings.Contains(r.Chat.LastUserText(), substr)
	}
}

// ToolOffered matches requests that offer the function tool name.
func ToolOffered(name string) func(*demobackend.Request) bool {
	return func(r *demobackend.Request) bool { return r.Chat != nil && r.Chat.HasTool(name) }
}

// LastRole matches requests whose last message has the given role, e.g.
// "tool" for the round after a tool call.
func LastRole(role string) func(*demobackend.Request) bool {
	return func(r *demobackend.Request) bool {
		return r.Chat != nil && len(r.Chat.Messages) > 0 && r.Chat.Messages[len(r.Chat.Messages)-1].Role == role
	}
}
