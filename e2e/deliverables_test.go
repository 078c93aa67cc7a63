package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// deltaKey collects the values of one extra delta key over a stream.
func deltaKey(t *testing.T, stream, key string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range events(t, stream) {
		if v, ok := delta(ev)[key].(map[string]any); ok {
			out = append(out, v)
		}
	}
	return out
}

const chartCall = `{"title":"Revenue","spec":{"type":"bar","labels":["Q1","Q2","Q3"],"series":[{"name":"2026","values":[120,135,161]}]}}`

// TestDeliverables runs the lifecycle through the real binary: a chart,
// a PDF that folds it in, then an edit of the chart in a later turn that
// echoes the objects; each file downloads through the Files API.
func TestDeliverables(t *testing.T) {
	up, _, key, g := fundedGateway(t, "maker")

	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "create_chart", Arguments: chartCall}),
		testupstream.ToolCalls(demobackend.ToolCall{Name: "create_document", Arguments: `{"title":"Q3 report","markdown":"# Q3\n\nRevenue rose.\n\n![Revenue by quarter](obj1)\n"}`}),
		testupstream.Text("Here are the chart and the report."),
	)
	status, stream := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Chart and report please"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, stream)
	}
	arts := deltaKey(t, stream, "artifact")
	if len(arts) != 2 {
		t.Fatalf("%d artifacts, want a chart and a document:\n%s", len(arts), stream)
	}
	chart, doc := arts[0], arts[1]
	if chart["type"] != "chart" || chart["object_id"] != "obj1" || chart["image_base64"] == "" || chart["file_id"] == nil {
		t.Errorf("chart artifact %v", keysOf(chart))
	}
	if doc["type"] != "document" || doc["object_id"] != "obj2" || doc["mime_type"] != "application/pdf" {
		t.Errorf("document artifact %v", keysOf(doc))
	}
	renames := deltaKey(t, stream, "artifact_rename")
	if len(renames) != 1 || renames[0]["object_id"] != "obj1" || renames[0]["new_object_id"] != "el1" {
		t.Errorf("renames %v, want obj1 to el1", renames)
	}
	if ids, _ := doc["consumed_object_ids"].([]any); len(ids) != 1 || ids[0] != "el1" {
		t.Errorf("consumed_object_ids %v, want [el1]", doc["consumed_object_ids"])
	}
	for _, a := range arts {
		id, _ := a["file_id"].(string)
		status, hdr, body := g.do("GET", "/v3/files/"+id+"/content", key, "")
		if status != 200 {
			t.Fatalf("download %s: %d %s", id, status, body)
		}
		magic := map[string]string{"chart": "\x89PNG", "document": "%PDF-"}[a["type"].(string)]
		if !strings.HasPrefix(body, magic) {
			t.Errorf("%s downloads as %q (%s), want %q", id, body[:min(8, len(body))], hdr.Get("Content-Type"), magic)
		}
		if dir := os.Getenv("SWITCHYARD_TEST_ARTEFACTS"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, id+"-"+a["type"].(string)), []byte(body), 0o644)
		}
	}

	// The next turn echoes the objects; the model edits the chart, now
	// the element el1, in place.
	objects, _ := json.Marshal(map[string]any{
		"el1":  map[string]any{"kind": "chart", "source": chart["source"], "title": chart["title"]},
		"obj2": map[string]any{"kind": "document", "source": doc["source"], "title": doc["title"]},
	})
	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "update_object", Arguments: `{"object_id":"el1","spec":{"type":"line","labels":["Q1","Q2","Q3"],"series":[{"name":"2026","values":[120,140,170]}]}}`}),
		testupstream.ToolCalls(demobackend.ToolCall{Name: "delete_object", Arguments: `{"object_id":"obj2"}`}),
		testupstream.Text("Updated."),
	)
	_, stream = v3Stream(t, g, key, `{"model":"svc-3","stream":true,"objects":`+string(objects)+`,"messages":[{"role":"user","content":"Make it a line chart and drop the report"}]}`)
	arts = deltaKey(t, stream, "artifact")
	if len(arts) != 1 || arts[0]["object_id"] != "el1" || !strings.Contains(arts[0]["source"].(string), `"line"`) {
		t.Fatalf("edit: artifacts %v", arts)
	}
	if rm := deltaKey(t, stream, "artifact_remove"); len(rm) != 1 || rm[0]["object_id"] != "obj2" {
		t.Errorf("artifact_remove %v, want obj2", rm)
	}
	// The service prompt gave the model the sources to edit.
	last := up.ChatRequests()[len(up.ChatRequests())-3]
	if sys := last.Messages[0].Text(); !strings.Contains(sys, "el1") {
		t.Errorf("the service prompt does not list el1:\n%s", sys)
	}
}

// TestObjectLifecycle runs what a client that misses events or makes ids
// up meets, through the real binary and store: a folded chart whose
// document changes only its title, a second fold of the same chart by a
// client that missed the rename, made-up ids, and files that go with the
// versions and objects they belong to.
func TestObjectLifecycle(t *testing.T) {
	up, _, key, g := fundedGateway(t, "keeper")
	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "create_chart", Arguments: chartCall}),
		testupstream.ToolCalls(demobackend.ToolCall{Name: "create_document", Arguments: `{"title":"Q3 report","markdown":"# Q3\n\n![Revenue](obj1)\n"}`}),
		testupstream.Text("Done."),
	)
	_, stream := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Chart and report"}]}`)
	arts := deltaKey(t, stream, "artifact")
	if len(arts) != 2 {
		t.Fatalf("%d artifacts:\n%s", len(arts), stream)
	}
	chart, doc := arts[0], arts[1]
	if src, _ := doc["source"].(string); !strings.Contains(src, "(el1)") {
		t.Fatalf("document source %q, want the embed rewritten to el1", src)
	}
	fileOf := func(a map[string]any) string { id, _ := a["file_id"].(string); return id }

	// The client missed the rename: it still lists obj1 as a chart. Only
	// the document's title changes (non-streaming), and a memo embeds
	// obj1 again.
	objects, _ := json.Marshal(map[string]any{
		"obj1": map[string]any{"kind": "chart", "source": chart["source"], "title": chart["title"]},
		"obj2": map[string]any{"kind": "document", "source": doc["source"], "title": doc["title"]},
	})
	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "update_object", Arguments: `{"object_id":"obj2","title":"Q3 report, final"}`}),
		testupstream.ToolCalls(demobackend.ToolCall{Name: "create_document", Arguments: `{"title":"Memo","markdown":"![Revenue](obj1)"}`}),
		testupstream.Text("Done."),
	)
	status, _, body := g.do("POST", "/v3/chat/completions", key, `{"model":"svc-3","objects":`+string(objects)+`,"messages":[{"role":"user","content":"Retitle, and a memo"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var answer struct {
		Artifacts []map[string]any `json:"artifacts"`
		Renames   []map[string]any `json:"artifact_renames"`
		Removals  []map[string]any `json:"artifact_removals"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer.Artifacts) != 2 {
		t.Fatalf("answer %s (%v)", body, err)
	}
	retitled, memo := answer.Artifacts[0], answer.Artifacts[1]
	if retitled["object_id"] != "obj2" || retitled["title"] != "Q3 report, final" {
		t.Errorf("title-only update: %v", retitled)
	}
	if ids, _ := memo["consumed_object_ids"].([]any); len(ids) != 1 || ids[0] != "el1" {
		t.Errorf("memo consumed %v, want el1: the chart is not folded twice", memo["consumed_object_ids"])
	}
	for _, rn := range answer.Renames {
		if rn["object_id"] != "obj1" || rn["new_object_id"] != "el1" {
			t.Errorf("rename %v: obj1 became el1 once", rn)
		}
	}
	if len(answer.Renames) == 0 {
		t.Errorf("the JSON answer does not repeat the rename the client missed: %s", body)
	}
	// The document's first version was replaced: its file is gone.
	if status, _, _ := g.do("GET", "/v3/files/"+fileOf(doc)+"/content", key, ""); status != 404 {
		t.Errorf("superseded document version downloads: %d", status)
	}
	if status, _, _ := g.do("GET", "/v3/files/"+fileOf(retitled)+"/content", key, ""); status != 200 {
		t.Errorf("current document version: %d", status)
	}

	// Deleting the document deletes its file; an id never handed out is
	// refused.
	objects, _ = json.Marshal(map[string]any{
		"el1":  map[string]any{"kind": "chart", "source": chart["source"], "title": chart["title"]},
		"obj2": map[string]any{"kind": "document", "source": retitled["source"], "title": retitled["title"]},
	})
	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "delete_object", Arguments: `{"object_id":"obj2"}`}),
		testupstream.Text("Deleted."),
	)
	status, _, body = g.do("POST", "/v3/chat/completions", key, `{"model":"svc-3","objects":`+string(objects)+`,"messages":[{"role":"user","content":"Drop the report"}]}`)
	if status != 200 || !strings.Contains(body, `"artifact_removals":[{"object_id":"obj2"}]`) {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, _, _ := g.do("GET", "/v3/files/"+fileOf(retitled)+"/content", key, ""); status != 404 {
		t.Errorf("deleted document's file downloads: %d", status)
	}
	status, _, body = g.do("POST", "/v3/chat/completions", key, `{"model":"svc-3","objects":{"obj31":{"kind":"chart","source":"{}","title":"x"}},"messages":[{"role":"user","content":"Update obj31"}]}`)
	if status != 400 || !strings.Contains(body, "invalid_objects") || !strings.Contains(body, "obj31") {
		t.Errorf("made-up obj31: %d %s, want 400 invalid_objects", status, body)
	}
}

// TestDeliverablesNotInTextMode checks that modalities ["text"] offers no
// file tool at all.
func TestDeliverablesNotInTextMode(t *testing.T) {
	up, _, key, g := fundedGateway(t, "texter")
	up.Enqueue(testupstream.Text("Just text."))
	v3Stream(t, g, key, `{"model":"svc-3","stream":true,"modalities":["text"],"messages":[{"role":"user","content":"a chart please"}]}`)
	req := up.ChatRequests()[0]
	for _, tl := range req.Tools {
		if strings.HasPrefix(tl.Function.Name, "create_") {
			t.Errorf("%s offered in text mode", tl.Function.Name)
		}
	}
}

// TestWebSearchSources uses a SearxNG-shaped server on loopback.
func TestWebSearchSources(t *testing.T) {
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"query":"q","results":[{"url":"https://example.org/a","title":"Result A","content":"About A","engine":"x"},` +
			`{"url":"https://example.org/b","title":"Result B","content":"About B","engine":"x"}],"answers":[],"suggestions":[],"unresponsive_engines":[]}`))
	}))
	t.Cleanup(searx.Close)
	up, _, key, g := fundedGateway(t, "searcher", "SWITCHYARD_SEARCH_URL", searx.URL)

	up.Enqueue(testupstream.ToolCalls(demobackend.ToolCall{Name: "web_search", Arguments: `{"query":"what is a"}`}), testupstream.Text("A is a letter."))
	_, stream := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"search what is a"}]}`)
	var sources []any
	for _, ev := range events(t, stream) {
		if s, ok := delta(ev)["search_sources"].([]any); ok {
			sources = append(sources, s...)
		}
	}
	if len(sources) != 2 || sources[0].(map[string]any)["url"] != "https://example.org/a" || sources[0].(map[string]any)["title"] != "Result A" {
		t.Fatalf("search_sources %v", sources)
	}
	// The JSON answer carries them too, top level.
	up.Enqueue(testupstream.ToolCalls(demobackend.ToolCall{Name: "web_search", Arguments: `{"query":"what is b"}`}), testupstream.Text("B."))
	_, _, body := g.do("POST", "/v3/chat/completions", key, `{"model":"svc-3","messages":[{"role":"user","content":"search b"}]}`)
	var answer struct {
		SearchSources []struct{ Title, URL string } `json:"search_sources"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer.SearchSources) != 2 {
		t.Fatalf("JSON answer search_sources: %v %s", err, body)
	}
	// skip_search offers no web_search.
	up.Enqueue(testupstream.Text("No search."))
	v3Stream(t, g, key, `{"model":"svc-3","stream":true,"skip_search":true,"messages":[{"role":"user","content":"hi"}]}`)
	last := up.ChatRequests()[len(up.ChatRequests())-1]
	for _, tl := range last.Tools {
		if tl.Function.Name == "web_search" {
			t.Errorf("web_search offered with skip_search")
		}
	}
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k, v := range m {
		if s, ok := v.(string); ok && len(s) > 40 {
			v = s[:40] + "…"
		}
		ks = append(ks, k+"="+strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", " ")))
	}
	return ks
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(bytes.Trim(b, `"`))
}
