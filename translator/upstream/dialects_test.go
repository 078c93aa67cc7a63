package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestRecordedDialects reads every answer of the corpus
// (testdata/dialects, one per backend dialect) as the orchestrator does:
// the answer text without reasoning, the reasoning apart, every tool call
// whole, the usage in whatever shape the backend reports it, and an error
// sent half way as an error after what came before it.
func TestRecordedDialects(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{})
	u, err := New(Config{BaseURL: up.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	for _, rec := range testupstream.Recordings(t) {
		t.Run(rec.File, func(t *testing.T) {
			up.Enqueue(up.Replay(rec))
			got := round(context.Background(), u, Request{
				Model:    demobackend.DefaultModel,
				Messages: NewConversation(Message{Role: "user", Content: "hi"}),
			})
			checkRecorded(t, rec, got)
		})
	}
}

func checkRecorded(t *testing.T, rec testupstream.Recording, got roundResult) {
	t.Helper()
	if got.content != rec.Text {
		t.Errorf("text %q, want %q", got.content, rec.Text)
	}
	if got.reasoning != rec.Reasoning {
		t.Errorf("reasoning %q, want %q", got.reasoning, rec.Reasoning)
	}
	if rec.Error != "" {
		var e *Error
		if got.err == nil || !asError(got.err, &e) || !strings.Contains(e.Message, rec.Error) {
			t.Fatalf("error %v, want an *Error saying %q", got.err, rec.Error)
		}
		return
	}
	if got.err != nil {
		t.Fatalf("error %v", got.err)
	}
	if len(got.calls) != len(rec.ToolCalls) {
		t.Fatalf("%d tool calls %+v, want %d", len(got.calls), got.calls, len(rec.ToolCalls))
	}
	for i, want := range rec.ToolCalls {
		c := got.calls[i]
		if c.Function.Name != want.Name || !sameJSON(c.Function.Arguments, want.Arguments) {
			t.Errorf("call %d: %s(%s), want %s(%s)", i, c.Function.Name, c.Function.Arguments, want.Name, want.Arguments)
		}
	}
	wantFinish := "stop"
	if len(rec.ToolCalls) > 0 {
		wantFinish = "tool_calls"
	}
	if got.finish != wantFinish {
		t.Errorf("finish reason %q, want %q", got.finish, wantFinish)
	}
	switch {
	case rec.Usage == nil && got.usage != nil:
		t.Errorf("usage %+v from an answer that reports none", *got.usage)
	case rec.Usage != nil && got.usage == nil:
		t.Errorf("no usage, want %+v", *rec.Usage)
	case rec.Usage != nil && (got.usage.Prompt != rec.Usage.Prompt || got.usage.Completion != rec.Usage.Completion):
		t.Errorf("usage %+v, want %+v", *got.usage, *rec.Usage)
	}
}

func asError(err error, e **Error) bool {
	var target *Error
	ok := errors.As(err, &target)
	*e = target
	return ok
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a == b
	}
	return reflect.DeepEqual(va, vb)
}
