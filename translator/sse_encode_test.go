package translator

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/translator/wire"
)

// TestChunkEncodingMatchesMarshal pins that the writer's encoding, the
// text fast path included, is byte for byte json.Marshal of the wire.Chunk.
func TestChunkEncodingMatchesMarshal(t *testing.T) {
	texts := []string{"", "Hi", " token", `quote " and \ backslash`, "tab\tnew\nline", "<b>&amp;</b>",
		"héllo wörld", "emoji 🚀", "line sep \u2028 para \u2029", "bad utf8 \xff\xfe", "ctl \x01\x1f \b\f", "\x7f del"}
	reason := "stop"
	idx := 1
	var chunks []wire.Chunk
	for _, s := range texts {
		chunks = append(chunks, wire.Chunk{Choices: []wire.ChunkChoice{{Delta: wire.Delta{Content: ptr(s)}}}})
	}
	chunks = append(chunks,
		wire.Chunk{Choices: []wire.ChunkChoice{{Delta: wire.Delta{Role: "assistant", Content: ptr("")}}}},
		wire.Chunk{Choices: []wire.ChunkChoice{{Delta: wire.Delta{Content: ptr("x"), ReasoningChars: &idx}}}},
		wire.Chunk{Choices: []wire.ChunkChoice{{Index: 1, Delta: wire.Delta{Content: ptr("x")}}}},
		wire.Chunk{Choices: []wire.ChunkChoice{{Delta: wire.Delta{}, FinishReason: &reason}}, Usage: &wire.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}},
		wire.Chunk{Choices: []wire.ChunkChoice{}, Usage: &wire.Usage{PromptTokens: 1}},
		wire.Chunk{},
	)
	for _, id := range []string{"chatcmpl-1", `odd "id" <>`} {
		for i, c := range chunks {
			rec := httptest.NewRecorder()
			w := NewStreamWriter(rec, StreamOptions{ID: id, Created: 1700000000, Model: "svc-3 é", Progress: true})
			w.started = true
			if err := w.chunkLocked(c); err != nil {
				t.Fatal(err)
			}
			c.ID, c.Object, c.Created, c.Model = id, "chat.completion.chunk", 1700000000, "svc-3 é"
			want, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(strings.TrimPrefix(rec.Body.String(), "data: "), "\n\n"); got != string(want) {
				t.Errorf("chunk %d:\n got %s\nwant %s", i, got, want)
			}
		}
	}
}

// BenchmarkStreamWriterSend is the encoding and write of one text chunk
// of a /v3 stream (the flush goes to a recorder, not a socket).
func BenchmarkStreamWriterSend(b *testing.B) {
	rec := httptest.NewRecorder()
	w := NewStreamWriter(rec, StreamOptions{ID: "chatcmpl-0123456789abcdef", Created: 1700000000, Model: "svc-3", Progress: true})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	d := wire.Delta{Content: ptr(" token")}
	b.ReportAllocs()
	for b.Loop() {
		rec.Body.Reset()
		if err := w.Send(d); err != nil {
			b.Fatal(err)
		}
	}
}

type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// TestSendBufferedWaitsForFlush pins that chunks relayed together leave
// with one flush, and that nothing stays behind once Flush is called.
func TestSendBufferedWaitsForFlush(t *testing.T) {
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	s := NewStreamWriter(w, StreamOptions{ID: "chatcmpl-1", Created: 1, Model: "m", Progress: true})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	start := w.flushes
	for _, text := range []string{"a", "b", "c"} {
		if err := s.SendBuffered(wire.Delta{Content: ptr(text)}); err != nil {
			t.Fatal(err)
		}
	}
	if w.flushes != start {
		t.Fatalf("%d flushes while buffering, want none", w.flushes-start)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.flushes != start+1 {
		t.Fatalf("%d flushes after Flush twice, want 1", w.flushes-start)
	}
	if got := strings.Count(w.Body.String(), `"content":`); got != 4 {
		t.Fatalf("%d content chunks written, want 4 (role chunk and three)", got)
	}
	// An ordinary Send still flushes at once.
	if err := s.Send(wire.Delta{Content: ptr("d")}); err != nil || w.flushes != start+2 {
		t.Fatalf("Send: %v, %d flushes", err, w.flushes-start)
	}
}
