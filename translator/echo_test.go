package translator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// countingIDs hands out ids from one counter per account and class.
type countingIDs struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingIDs) NextObjectID(_ context.Context, account string, class objectid.Class) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	prefix := "obj"
	if class == objectid.Element {
		prefix = "el"
	}
	c.n[account+prefix]++
	return fmt.Sprintf("%s%d", prefix, c.n[account+prefix]), nil
}

// ObjectStates trusts every well-formed id: these tests send objects
// maps of ids no counter here handed out.
func (c *countingIDs) ObjectStates(_ context.Context, _ string, ids []string) (map[string]storage.ObjectState, error) {
	out := map[string]storage.ObjectState{}
	for _, id := range ids {
		_, _, ok := objectid.Parse(id)
		out[id] = storage.ObjectState{Issued: ok}
	}
	return out, nil
}

func (c *countingIDs) SaveObject(context.Context, string, string, string) (string, error) {
	return "", nil
}

func (c *countingIDs) RetireObject(context.Context, string, string, string) (string, error) {
	return "", nil
}

func imageMessages(extra string) string {
	img := jsonString(dataURL("image/png", pngBytes))
	return `{"model":"svc-3","stream":STREAM,` + extra + `"messages":[
		{"role":"user","content":[{"type":"text","text":"old"},{"type":"image_url","image_url":{"url":` + img + `}}]},
		{"role":"assistant","content":"Seen."},
		{"role":"user","content":[{"type":"text","text":"And these?"},{"type":"image_url","image_url":{"url":` + img + `}},{"type":"input_file","file_id":"file-img"}]}]}`
}

func TestCallerImagesEchoedAsElements(t *testing.T) {
	files := fakeFiles{"acct1/file-img": {Name: "chart.png", MIME: "image/png", Image: pngBytes}}
	h := newHarness(t, harnessOptions{files: files, ids: &countingIDs{}})
	h.up.Enqueue(testupstream.Text("Two images."))
	r := h.do(strings.Replace(imageMessages(""), "STREAM", "true", 1), withUser(nil))
	checkStream(t, r.body, true, true)
	// Only the newest message's two images, each once, before the answer.
	if n := strings.Count(r.body, `"artifact":{"type":"image"`); n != 2 {
		t.Fatalf("%d image artifacts, want 2:\n%s", n, r.body)
	}
	for _, want := range []string{`"object_id":"el1","title":"Image 1"`, `"object_id":"el2","title":"chart.png"`,
		`"image_base64":"` + base64.StdEncoding.EncodeToString(pngBytes) + `"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Index(r.body, `"artifact"`) > strings.Index(r.body, `"content":"Two`) {
		t.Error("image artifacts after the answer")
	}
	if _, _, err := parseWithOpenAI(t, r.body); err != nil {
		t.Fatalf("openai-go: %v", err)
	}
	if sys := h.up.ChatRequests()[0].Messages[0].Text(); !strings.Contains(sys, "el1 (Image 1), el2 (chart.png)") {
		t.Errorf("the model was not told the element ids:\n%s", sys)
	}

	// Non-streaming: in the top-level artifacts, with the image inline,
	// since there is no file to fetch it from.
	h.up.Enqueue(testupstream.Text("Again."))
	r = h.do(strings.Replace(imageMessages(""), "STREAM", "false", 1), withUser(nil))
	var resp struct {
		Artifacts []wire.Artifact `json:"artifacts"`
	}
	if err := json.Unmarshal([]byte(r.body), &resp); err != nil || len(resp.Artifacts) != 2 ||
		resp.Artifacts[0].ObjectID != "el3" || resp.Artifacts[0].ImageBase64 == "" {
		t.Fatalf("JSON artifacts %+v (%v):\n%s", resp.Artifacts, err, r.body)
	}
}

func TestCallerImagesNotEchoedWithoutFiles(t *testing.T) {
	files := fakeFiles{"acct1/file-img": {Name: "chart.png", MIME: "image/png", Image: pngBytes}}
	h := newHarness(t, harnessOptions{files: files, ids: &countingIDs{}})
	h.up.Enqueue(testupstream.Text("Plain."))
	r := h.do(strings.Replace(imageMessages(`"modalities":["text"],`), "STREAM", "true", 1), withUser(nil))
	if strings.Contains(r.body, `"artifact"`) {
		t.Fatalf("text-only request got an artifact:\n%s", r.body)
	}
}

// storedFiles is an artifacts.FileStore that keeps what it is given.
type storedFiles struct{ names []string }

func (s *storedFiles) StoreGenerated(_ context.Context, _, name string, r io.Reader) (storage.File, error) {
	_, _ = io.ReadAll(r)
	s.names = append(s.names, name)
	return storage.File{ID: fmt.Sprintf("file-%d", len(s.names)), Filename: name}, nil
}

func (s *storedFiles) Delete(context.Context, string, string) (storage.File, error) {
	return storage.File{}, storage.ErrNotFound
}

// In a non-streaming answer the caller's images are stored and listed
// by file_id, without base64 (spec 2.2).
func TestCallerImagesStoredForJSONAnswers(t *testing.T) {
	files := fakeFiles{"acct1/file-img": {Name: "chart.png", MIME: "image/png", Image: pngBytes}}
	store := &storedFiles{}
	h := newHarness(t, harnessOptions{files: files, ids: &countingIDs{}, outputs: store})
	h.up.Enqueue(testupstream.Text("Seen."))
	r := h.do(strings.Replace(imageMessages(""), "STREAM", "false", 1), withUser(nil))
	var resp struct {
		Artifacts []wire.Artifact `json:"artifacts"`
	}
	if err := json.Unmarshal([]byte(r.body), &resp); err != nil || len(resp.Artifacts) != 2 {
		t.Fatalf("artifacts %+v (%v):\n%s", resp.Artifacts, err, r.body)
	}
	for _, a := range resp.Artifacts {
		if a.FileID == "" || a.ImageBase64 != "" {
			t.Errorf("artifact %s: file_id %q, %d base64 bytes; want a file id and no base64", a.ObjectID, a.FileID, len(a.ImageBase64))
		}
	}
	if len(store.names) != 2 || !strings.HasSuffix(store.names[0], ".png") {
		t.Errorf("stored %v", store.names)
	}
}
