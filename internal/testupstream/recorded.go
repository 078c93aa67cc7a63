package testupstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// Recording is an answer of a real backend, kept byte for byte in
// translator/upstream/testdata/dialects, with what a client must read
// from it. The corpus's manifest.json names the public source of each
// answer's format.
type Recording struct {
	File    string `json:"file"`
	Dialect string `json:"dialect"`
	Source  string `json:"source"`
	Shape   string `json:"shape"`
	// Text is the answer text; Reasoning the reasoning text, which a
	// client of /v3 must never see.
	Text      string         `json:"text"`
	Reasoning string         `json:"reasoning"`
	ToolCalls []RecordedCall `json:"tool_calls"`
	// Usage is what the backend reports, in whatever shape; nil when it
	// reports nothing and the gateway must estimate.
	Usage *RecordedUsage `json:"usage"`
	// Error is part of the message of an error the stream ends with.
	Error string `json:"error"`

	// Body is the answer as sent, ContentType its media type (from the
	// file's extension).
	Body        []byte `json:"-"`
	ContentType string `json:"-"`
}

// RecordedCall is a tool call of a Recording; Arguments compare as JSON.
type RecordedCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// RecordedUsage is the usage a Recording reports.
type RecordedUsage struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
}

// Stream reports whether r is an event stream.
func (r Recording) Stream() bool { return r.ContentType == "text/event-stream" }

// RecordingsDir is where the corpus lives, found from this file's place
// in the module so that tests of any package can read it.
func RecordingsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "translator", "upstream", "testdata", "dialects")
}

// Recordings reads the corpus, failing the test when it cannot.
func Recordings(t testing.TB) []Recording {
	t.Helper()
	dir := RecordingsDir()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Answers []Recording `json:"answers"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for i := range m.Answers {
		r := &m.Answers[i]
		if r.Source == "" {
			t.Fatalf("%s: no source cited", r.File)
		}
		if r.Body, err = os.ReadFile(filepath.Join(dir, r.File)); err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(r.File) {
		case ".sse":
			r.ContentType = "text/event-stream"
		case ".json":
			r.ContentType = "application/json"
		default:
			t.Fatalf("%s: want .sse or .json", r.File)
		}
	}
	return m.Answers
}

// recordingHeader marks a reply that Replay made; ServeHTTP swaps the
// demo answer for the recording it names. It never reaches a client.
const recordingHeader = "X-Testupstream-Recording"

// Replay is a Reply that answers with rec's bytes unchanged, in its
// content type, whatever the request asked (a stream or not). The
// request is checked and recorded as any other: one the demo backend
// would refuse is refused, not answered with the recording.
func (s *Server) Replay(rec Recording) demobackend.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordings = append(s.recordings, rec)
	h := http.Header{}
	h.Set(recordingHeader, strconv.Itoa(len(s.recordings)-1))
	return demobackend.Reply{Header: h}
}

func (s *Server) recording(id string) (Recording, bool) {
	i, err := strconv.Atoi(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || i < 0 || i >= len(s.recordings) {
		return Recording{}, false
	}
	return s.recordings[i], true
}

// ServeHTTP serves the demo backend, with replies made by Replay
// answered by their recordings.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Server.ServeHTTP(&replayWriter{ResponseWriter: w, s: s}, r)
}

// replayWriter writes a recording in place of the demo answer whose
// headers name one, and drops the demo answer.
type replayWriter struct {
	http.ResponseWriter
	s        *Server
	decided  bool
	replayed bool
}

func (w *replayWriter) WriteHeader(code int) {
	if w.decided {
		if !w.replayed {
			w.ResponseWriter.WriteHeader(code)
		}
		return
	}
	if code < 200 {
		w.ResponseWriter.WriteHeader(code) // informational: not the answer yet
		return
	}
	w.decided = true
	h := w.Header()
	id := h.Get(recordingHeader)
	h.Del(recordingHeader)
	rec, ok := w.s.recording(id)
	if id == "" || !ok || code != http.StatusOK {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.replayed = true
	h.Del("Content-Length")
	h.Set("Content-Type", rec.ContentType)
	w.ResponseWriter.WriteHeader(code)
	flusher, _ := w.ResponseWriter.(http.Flusher)
	// An event at a time, flushed, as a backend sends them, so that the
	// reader sees them arrive apart; a JSON answer goes whole.
	for _, piece := range pieces(rec) {
		if _, err := w.ResponseWriter.Write(piece); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func (w *replayWriter) Write(p []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.replayed {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *replayWriter) Flush() {
	if w.replayed {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// pieces splits a stream recording after each blank line, whatever its
// line ends.
func pieces(rec Recording) [][]byte {
	if !rec.Stream() {
		return [][]byte{rec.Body}
	}
	var out [][]byte
	b := rec.Body
	for len(b) > 0 {
		end := len(b)
		for _, sep := range []string{"\r\n\r\n", "\n\n", "\r\r"} {
			if i := bytes.Index(b, []byte(sep)); i >= 0 && i+len(sep) < end {
				end = i + len(sep)
			}
		}
		out = append(out, b[:end])
		b = b[end:]
	}
	return out
}
