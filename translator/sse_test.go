package translator

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/translator/wire"
)

func newTestWriter(progress bool) (*StreamWriter, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	return NewStreamWriter(rec, StreamOptions{ID: "chatcmpl-1", Created: 1700000000, Model: "svc-3", Progress: progress, Now: (fakeclock.New(testNow)).Now}), rec
}

func TestStreamWriterFrames(t *testing.T) {
	cases := []struct {
		name     string
		progress bool
		run      func(w *StreamWriter)
		want     []string // data of each frame
	}{
		{
			name: "usage on the finishing chunk", progress: true,
			run: func(w *StreamWriter) {
				_ = w.Send(wire.Delta{Content: ptr("Hi")})
				_ = w.Finish("stop", &wire.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, false)
			},
			want: []string{
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
				`[DONE]`,
			},
		},
		{
			name: "usage in a separate chunk", progress: true,
			run: func(w *StreamWriter) {
				_ = w.Finish("length", &wire.Usage{TotalTokens: 0}, true)
			},
			want: []string{
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`,
				`[DONE]`,
			},
		},
		{
			name: "progress off drops events but keeps artifacts", progress: false,
			run: func(w *StreamWriter) {
				_ = w.Send(wire.Delta{Act: &wire.Act{ID: 1, Op: wire.ActStart, Kind: wire.ActModel, Label: "x"}})
				_ = w.Send(wire.Delta{SearchSources: []wire.Source{{Title: "a", URL: "https://a"}}})
				_ = w.Send(wire.Delta{ArtifactRemove: &wire.ArtifactRemove{ObjectID: "obj1"}})
				_ = w.Finish("stop", nil, false)
			},
			want: []string{
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{"artifact_remove":{"object_id":"obj1"}},"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`[DONE]`,
			},
		},
		{
			name: "error ends the stream", progress: true,
			run: func(w *StreamWriter) {
				_ = w.Fail(apierror.New(502, apierror.TypeServer, CodeStreamInterrupted, "broke"))
				if err := w.Send(wire.Delta{Content: ptr("late")}); err == nil {
					panic("send after Fail succeeded")
				}
			},
			want: []string{
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"svc-3","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"error":{"message":"broke","type":"server_error","code":"stream_interrupted"}}`,
				`[DONE]`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, rec := newTestWriter(tc.progress)
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			tc.run(w)
			if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("content type %q", ct)
			}
			if !rec.Flushed {
				t.Errorf("not flushed")
			}
			var got []string
			for _, f := range strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n") {
				got = append(got, strings.TrimPrefix(f, "data: "))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// failingWriter fails every write after the first n.
type failingWriter struct {
	http.ResponseWriter
	n int
}

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("broken pipe")
	}
	f.n--
	return f.ResponseWriter.Write(b)
}

func (f *failingWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

func TestStreamWriterStopsAfterWriteError(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewStreamWriter(&failingWriter{ResponseWriter: rec, n: 1}, StreamOptions{ID: "x", Model: "m", Progress: true})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.Send(wire.Delta{Content: ptr("a")}); err == nil {
		t.Fatal("write error not reported")
	}
	if err := w.Finish("stop", nil, false); err == nil || w.Err() == nil {
		t.Fatal("writer kept going after a write error")
	}
	if strings.Contains(rec.Body.String(), "[DONE]") {
		t.Errorf("[DONE] written after a failure")
	}
}

func TestStreamWriterClipsStepData(t *testing.T) {
	if got := clipStepData(strings.Repeat("é", wire.MaxStepDataChars+5)); len([]rune(got)) != wire.MaxStepDataChars {
		t.Errorf("step data clipped to %d characters", len([]rune(got)))
	}
}
