package translator

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// bodyRecorder keeps the bodies of the requests it sends on.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body.Close()
	b.mu.Lock()
	b.bodies = append(b.bodies, body)
	b.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	return http.DefaultTransport.RoundTrip(r)
}

// TestUpstreamBodiesUnchanged holds the bytes the backend is sent over
// a turn of two rounds to a golden: the service prompt, history, an
// uploaded document and image, inline images (one in standard base64,
// one with line breaks and no padding, which is sent in standard form),
// sampling parameters, then the model's tool call and the tool's answer
// with characters JSON escapes.
func TestUpstreamBodiesUnchanged(t *testing.T) {
	files := fakeFiles{
		"acct1/file-txt": {Name: "notes.txt", MIME: "text/plain", Text: "Quarterly numbers: 42 <b>&</b>."},
		"acct1/file-img": {Name: "chart.png", MIME: "image/png", Image: append(bytes.Clone(pngBytes), 1, 2, 3)},
	}
	search := registeredTool{searchTool().capability, &fakeTool{name: "web_search", run: searchTool().tool.(*fakeTool).run}}
	h := newHarness(t, harnessOptions{files: files, ids: &countingIDs{}, tools: []registeredTool{search, documentTool()}})
	rec := &bodyRecorder{}
	up, err := upstream.New(upstream.Config{BaseURL: h.up.URL(), Model: "backend-model", HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	h.orch.cfg.Upstream = up
	h.up.Enqueue(demobackend.Reply{Content: "Let me check <that>.", ToolCalls: []demobackend.ToolCall{searchCall}},
		testupstream.Text("Done."))

	odd := base64.StdEncoding.EncodeToString(append(bytes.Clone(pngBytes), 9, 9, 9, 9))
	odd = strings.TrimRight(odd[:20]+"\r\n"+odd[20:], "=")
	body := `{"model":"svc-3","stream":true,"temperature":0.25,"stop":["\n\n"],"messages":[
		{"role":"system","content":"Answer in \"quotes\" \u2028 please."},
		{"role":"user","content":"First question"},
		{"role":"assistant","content":"First answer"},
		{"role":"user","content":[
			{"type":"text","text":"Look at these"},
			{"type":"input_file","file_id":"file-txt"},
			{"type":"input_file","file_id":"file-img"},
			{"type":"image_url","image_url":{"url":` + jsonString(dataURL("image/png", pngBytes)) + `}},
			{"type":"image_url","image_url":` + jsonString("data:image/jpeg;base64,"+odd) + `}
		]}]}`
	r := h.do(body, map[string]string{request.HeaderUserName: "Ada", request.HeaderTimezone: "Asia/Tokyo"})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if len(rec.bodies) != 2 {
		t.Fatalf("%d upstream requests, want 2", len(rec.bodies))
	}
	compareGolden(t, "upstream_bodies", string(bytes.Join(rec.bodies, []byte("\n\n")))+"\n")
}
