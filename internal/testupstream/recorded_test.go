package testupstream

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

func TestReplaySendsTheRecordingAsItIs(t *testing.T) {
	up := Start(t, demobackend.Options{})
	recs := Recordings(t)
	if len(recs) < 12 {
		t.Fatalf("%d recordings, want the corpus", len(recs))
	}
	post := func(body string) (int, string, string) {
		t.Helper()
		resp, err := http.Post(up.URL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}

	for _, rec := range recs {
		up.Enqueue(up.Replay(rec))
		// A request for a stream gets a JSON recording, and the other way
		// round: the recording decides.
		status, ct, body := post(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		if status != 200 || ct != rec.ContentType || body != string(rec.Body) {
			t.Fatalf("%s: %d %s\n%s", rec.File, status, ct, body)
		}
		if strings.Contains(body, recordingHeader) {
			t.Fatalf("%s: the marker header leaked", rec.File)
		}
	}

	// A request the demo backend refuses is refused, the recording kept
	// for the next one.
	up.Enqueue(up.Replay(recs[0]))
	if status, _, body := post(`{"model":"m"}`); status != 400 || !strings.Contains(body, "messages") {
		t.Fatalf("a request without messages: %d %s", status, body)
	}
	if up.Pending() != 1 {
		t.Fatalf("%d replies pending, want the recording still queued", up.Pending())
	}
}
