package translator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// streamFacts is what checkStream learns from a valid stream.
type streamFacts struct {
	content    string
	finish     string
	usage      map[string]any
	errorCode  string
	deltaKeys  map[string]bool
	artifacts  int
	comments   int
	actsClosed map[int64]string // act id -> closing op
}

// checkStream parses body with a strict reading of spec 4.1 and 6 and
// fails the test on any deviation: every frame is `data: <json>` plus a
// blank line (or an SSE comment), every JSON is a chat.completion.chunk
// with exactly one choice at index 0 (or none, with usage), the stream
// ends with [DONE] and nothing after it, an error frame is directly
// followed by [DONE], activity ids rise, every started activity is closed
// once, and ms is present exactly on done and fail.
func checkStream(t *testing.T, body string, revisionB, progress bool) streamFacts {
	t.Helper()
	f := streamFacts{deltaKeys: map[string]bool{}, actsClosed: map[int64]string{}}
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream does not end with [DONE]:\n%s", body)
	}
	frames := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	open := map[int64]bool{}
	var lastAct int64
	var id, model string
	var created float64
	finishes := 0
	allowed := map[string]bool{"role": true, "content": true, "artifact": true, "artifact_remove": true, "artifact_rename": true}
	if progress {
		for _, k := range []string{"act", "search_sources", "queue_position"} {
			allowed[k] = true
		}
		if revisionB {
			for _, k := range []string{"step", "step_data", "reasoning_chars"} {
				allowed[k] = true
			}
		}
	}
	for i, fr := range frames {
		if strings.Contains(fr, "\n") {
			t.Fatalf("frame %d spans several lines: %q", i, fr)
		}
		if strings.HasPrefix(fr, ": ") {
			f.comments++
			continue
		}
		data, ok := strings.CutPrefix(fr, "data: ")
		if !ok {
			t.Fatalf("frame %d is not a data frame: %q", i, fr)
		}
		if data == "[DONE]" {
			if i != len(frames)-1 {
				t.Fatalf("frames after [DONE]")
			}
			continue
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("frame %d is not JSON: %v: %q", i, err, data)
		}
		if e, ok := m["error"].(map[string]any); ok {
			for _, k := range []string{"message", "type", "code"} {
				if _, ok := e[k].(string); !ok {
					t.Fatalf("error frame lacks %s: %q", k, data)
				}
			}
			if i != len(frames)-2 || frames[i+1] != "data: [DONE]" {
				t.Fatalf("error frame not followed by [DONE]")
			}
			f.errorCode = e["code"].(string)
			continue
		}
		if m["object"] != "chat.completion.chunk" {
			t.Fatalf("frame %d: object %v", i, m["object"])
		}
		cid, _ := m["id"].(string)
		cmodel, _ := m["model"].(string)
		ccreated, _ := m["created"].(json.Number).Float64()
		if i == 0 {
			id, model, created = cid, cmodel, ccreated
		}
		if cid != id || cmodel != model || ccreated != created || id == "" || model == "" {
			t.Fatalf("frame %d: id/model/created differ from the first chunk: %q", i, data)
		}
		choices, ok := m["choices"].([]any)
		if !ok {
			t.Fatalf("frame %d: choices missing", i)
		}
		if u, ok := m["usage"].(map[string]any); ok {
			f.usage = u
			checkUsage(t, u)
		}
		if len(choices) == 0 {
			if f.usage == nil {
				t.Fatalf("frame %d: no choices and no usage", i)
			}
			continue
		}
		if len(choices) != 1 {
			t.Fatalf("frame %d: %d choices", i, len(choices))
		}
		c := choices[0].(map[string]any)
		if c["index"] != json.Number("0") {
			t.Fatalf("frame %d: index %v", i, c["index"])
		}
		if _, ok := c["finish_reason"]; !ok {
			t.Fatalf("frame %d: finish_reason key missing", i)
		}
		if fr, ok := c["finish_reason"].(string); ok {
			finishes++
			f.finish = fr
		}
		delta, ok := c["delta"].(map[string]any)
		if !ok {
			t.Fatalf("frame %d: delta missing", i)
		}
		if len(delta) == 0 && c["finish_reason"] == nil {
			t.Fatalf("frame %d: empty chunk", i)
		}
		for k, v := range delta {
			if !allowed[k] {
				t.Fatalf("frame %d: delta key %q not allowed here (revision B %v, progress %v)", i, k, revisionB, progress)
			}
			f.deltaKeys[k] = true
			switch k {
			case "content":
				f.content += v.(string)
			case "artifact":
				f.artifacts++
			case "act":
				lastAct = checkAct(t, v.(map[string]any), lastAct, open, f.actsClosed, revisionB)
			}
		}
	}
	if want := map[bool]int{true: 0, false: 1}[f.errorCode != ""]; finishes != want {
		t.Fatalf("%d chunks with a finish_reason, want %d", finishes, want)
	}
	if f.errorCode == "" && len(open) > 0 {
		t.Fatalf("activities never closed: %v", open)
	}
	return f
}

func checkAct(t *testing.T, a map[string]any, last int64, open map[int64]bool, closed map[int64]string, revisionB bool) int64 {
	t.Helper()
	id, _ := a["id"].(json.Number).Int64()
	op, _ := a["op"].(string)
	kind, _ := a["kind"].(string)
	if kind != wire.ActModel && kind != wire.ActTool {
		t.Fatalf("act kind %q", kind)
	}
	if _, ok := a["label"].(string); !ok {
		t.Fatalf("act without label")
	}
	_, hasMS := a["ms"]
	_, hasChars := a["chars"]
	if hasChars && (!revisionB || kind != wire.ActModel) {
		t.Fatalf("chars on act %v (revision B %v)", a, revisionB)
	}
	switch op {
	case wire.ActStart:
		if id <= last {
			t.Fatalf("act id %d does not rise (last %d)", id, last)
		}
		if hasMS {
			t.Fatalf("ms on start")
		}
		open[id] = true
		return id
	case wire.ActTick:
		if !open[id] || hasMS {
			t.Fatalf("tick of act %d that is not open, or with ms", id)
		}
	case wire.ActDone, wire.ActFail:
		if !open[id] || !hasMS {
			t.Fatalf("%s of act %d that is not open, or without ms", op, id)
		}
		delete(open, id)
		closed[id] = op
	default:
		t.Fatalf("act op %q", op)
	}
	return last
}

func checkUsage(t *testing.T, u map[string]any) {
	t.Helper()
	num := func(k string) int64 {
		n, ok := u[k].(json.Number)
		if !ok {
			t.Fatalf("usage.%s missing: %v", k, u)
		}
		v, _ := n.Int64()
		return v
	}
	if num("prompt_tokens")+num("completion_tokens") != num("total_tokens") {
		t.Fatalf("usage does not add up: %v", u)
	}
}

// parseWithOpenAI reads body with the official SDK's stream decoder and
// accumulator, as a client would, and returns the accumulated answer,
// the delta keys the SDK did not know, and the stream's error.
func parseWithOpenAI(t *testing.T, body string) (openai.ChatCompletion, map[string]bool, error) {
	t.Helper()
	resp := &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader([]byte(body))),
	}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	extra := map[string]bool{}
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			t.Fatalf("the SDK's accumulator refused chunk %s", chunk.RawJSON())
		}
		for _, c := range chunk.Choices {
			for k := range c.Delta.JSON.ExtraFields {
				extra[k] = true
			}
		}
	}
	return acc.ChatCompletion, extra, stream.Err()
}

func describe(r result) string {
	if r.header.Get("Content-Type") == "text/event-stream" {
		return r.body
	}
	return fmt.Sprintf("HTTP %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
}
