package testupstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const testKey = "sk-test-upstream-key"

// newClient is the official client pointed at s, without retries so
// that scripted failures surface as they are.
func newClient(s *Server) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(s.URL()),
		option.WithAPIKey(testKey),
		option.WithMaxRetries(0),
	)
}

// post sends body to path with the test key and returns the response.
func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.URL(), "/v1")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseData returns the data payloads of an event stream in order, and
// whether the read ended cleanly.
func sseData(r io.Reader) (frames []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			frames = append(frames, data)
		}
	}
	return frames, sc.Err()
}

// decode unmarshals a JSON frame into a generic map for shape checks.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("frame %q: %v", s, err)
	}
	return m
}

// errorEnvelope decodes an error body.
func errorEnvelope(t *testing.T, body io.Reader) (typ, code, message string) {
	t.Helper()
	var env struct {
		Error struct{ Type, Code, Message string } `json:"error"`
	}
	if err := json.NewDecoder(body).Decode(&env); err != nil {
		t.Fatalf("error body is not an envelope: %v", err)
	}
	return env.Error.Type, env.Error.Code, env.Error.Message
}
