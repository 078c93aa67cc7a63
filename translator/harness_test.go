package translator

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/artifacts"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
)

// testNow is the fixed clock of orchestrator tests.
var testNow = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// fakeRecorder keeps usage records and charges a fixed price.
type fakeRecorder struct {
	mu      sync.Mutex
	records []storage.UsageRecord
	cost    int64
}

func (r *fakeRecorder) RecordUsage(ctx context.Context, rec storage.UsageRecord) (int64, error) {
	if ctx.Err() != nil {
		return 0, errors.New("record context is cancelled")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return r.cost, nil
}

func (r *fakeRecorder) all() []storage.UsageRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]storage.UsageRecord(nil), r.records...)
}

// fakeMemory is an in-memory storage.Memory.
type fakeMemory struct {
	mu    sync.Mutex
	facts map[string][]string
}

func (m *fakeMemory) Facts(_ context.Context, account, user string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.facts[account+"/"+user]...), nil
}

func (m *fakeMemory) Remember(_ context.Context, account, user, fact string, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.facts == nil {
		m.facts = map[string][]string{}
	}
	k := account + "/" + user
	m.facts[k] = append(m.facts[k], fact)
	if n := len(m.facts[k]); n > max {
		m.facts[k] = m.facts[k][n-max:]
	}
	return nil
}

// fakeFiles is an in-memory FileOpener.
type fakeFiles map[string]Attachment

func (f fakeFiles) OpenFile(_ context.Context, account, id string) (Attachment, error) {
	a, ok := f[account+"/"+id]
	if !ok {
		return Attachment{}, errNotFoundForTest
	}
	return a, nil
}

var errNotFoundForTest = fmt.Errorf("file lookup: %w", storage.ErrNotFound)

// fakeTool is a scripted tool.
type fakeTool struct {
	name string
	run  func(ctx context.Context, c tools.Call) (tools.Result, error)
}

func (f *fakeTool) Name() string            { return f.name }
func (f *fakeTool) Description() string     { return "Test tool " + f.name + "." }
func (f *fakeTool) Schema() json.RawMessage { return tools.Schemas[f.name] }
func (f *fakeTool) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	return f.run(ctx, c)
}

// harness wires an Orchestrator to a scripted upstream.
type harness struct {
	t        *testing.T
	up       *testupstream.Server
	orch     *Orchestrator
	clock    *fakeclock.Clock
	recorder *fakeRecorder
	memory   *fakeMemory
	ticks    chan time.Time
	profile  policy.Profile
}

type harnessOptions struct {
	revision  policy.Revision
	tools     []registeredTool
	files     FileOpener
	memory    *fakeMemory
	maxRounds int
	up        demobackend.Options
	admit     func(ctx context.Context, onPosition func(int)) (func(), error)
	ids       storage.ObjectIDs
	outputs   artifacts.FileStore

	maxToolCalls      int
	renderConcurrency int
	toolTimeout       time.Duration
	observer          func(tool, outcome string, d time.Duration)
}

type registeredTool struct {
	capability tools.Capability
	tool       tools.Tool
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.revision == "" {
		o.revision = policy.RevisionB
	}
	h := &harness{
		t:        t,
		clock:    fakeclock.New(testNow),
		recorder: &fakeRecorder{cost: 7},
		memory:   o.memory,
		ticks:    make(chan time.Time),
		profile:  policy.ProfileFor(o.revision),
	}
	if h.memory == nil {
		h.memory = &fakeMemory{}
	}
	o.up.Now = h.clock.Now
	h.up = testupstream.Start(t, o.up)
	up, err := upstream.New(upstream.Config{BaseURL: h.up.URL(), Model: "backend-model"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	reg := &tools.Registry{}
	for _, rt := range o.tools {
		if err := reg.Register(rt.capability, rt.tool); err != nil {
			t.Fatal(err)
		}
	}
	h.orch, err = New(Config{
		Upstream:  up,
		Profile:   h.profile,
		Tools:     reg,
		Memory:    h.memory,
		Files:     o.files,
		Outputs:   o.outputs,
		Usage:     h.recorder,
		MaxRounds: o.maxRounds,
		Admit:     o.admit,
		IDs:       o.ids,
		Now:       h.clock.Now,

		MaxToolCallsPerRound: o.maxToolCalls,
		RenderConcurrency:    o.renderConcurrency,
		ToolTimeout:          o.toolTimeout,
		ToolObserver:         o.observer,
		NewTicker: func(time.Duration) (<-chan time.Time, func()) {
			return h.ticks, func() {}
		},
		NewID: func() string { return "chatcmpl-test" },
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// result is a finished exchange.
type result struct {
	status int
	header http.Header
	body   string
}

// do sends body with headers through request.Parse and Serve.
func (h *harness) do(body string, headers map[string]string) result {
	return h.doWith(context.Background(), nil, body, headers)
}

// doWith lets the test wrap the response writer.
func (h *harness) doWith(ctx context.Context, wrap func(http.ResponseWriter) http.ResponseWriter, body string, headers map[string]string) result {
	h.t.Helper()
	return h.doAs(ctx, "acct1", wrap, body, headers)
}

// doAs is doWith for a request of the given account.
func (h *harness) doAs(ctx context.Context, account string, wrap func(http.ResponseWriter) http.ResponseWriter, body string, headers map[string]string) result {
	h.t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v3/chat/completions", strings.NewReader(body)).WithContext(ctx)
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	var w http.ResponseWriter = rec
	if wrap != nil {
		w = wrap(rec)
	}
	req, err := request.Parse([]byte(body), r.Header, request.Limits{Profile: h.profile})
	if err != nil {
		h.t.Fatalf("request.Parse: %v", err)
	}
	h.orch.Serve(w, r, req, Caller{AccountID: account, KeyID: "key1", RequestID: "req1"})
	return result{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// chatBody builds a request body.
func chatBody(stream bool, user string, extra string) string {
	b := `{"model":"svc-3","stream":` + boolText(stream) + `,"messages":[{"role":"user","content":` + jsonString(user) + `}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pngBytes is a valid PNG signature followed by padding; enough for
// content sniffing.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 32)...)

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

func userWith(content string) string {
	return `{"model":"svc-3","messages":[{"role":"user","content":` + content + `}]}`
}
