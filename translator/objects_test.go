package translator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// issuedIDs is a store that handed out obj1 to obj3 and el1 only.
type issuedIDs struct{ countingIDs }

func (*issuedIDs) ObjectStates(_ context.Context, _ string, ids []string) (map[string]storage.ObjectState, error) {
	out := map[string]storage.ObjectState{}
	for _, id := range ids {
		c, n, ok := objectid.Parse(id)
		out[id] = storage.ObjectState{Issued: ok && (c == objectid.Final && n <= 3 || c == objectid.Element && n <= 1)}
	}
	return out, nil
}

// foldTool folds obj1 into a new document obj3 and deletes obj2, as the
// artifact tools would.
func foldTool() registeredTool {
	return registeredTool{tools.FileOutput, &fakeTool{name: tools.NameCreateDocument, run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{
			Content:   "Created obj3.",
			Object:    "obj3",
			Artifacts: []wire.Artifact{{Type: "document", ObjectID: "obj3", Title: "Report", FileID: "file-abc", FileBase64: "JVBERi0xLjQK"}},
			Renamed:   []wire.ArtifactRename{{ObjectID: "obj1", NewObjectID: "el1"}},
			Removed:   []string{"obj2"},
		}, nil
	}}}
}

// A non-streaming answer carries the renames and removals a stream would
// have carried as events.
func TestJSONAnswerCarriesObjectEvents(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{foldTool()}, ids: &issuedIDs{}})
	h.up.Enqueue(testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameCreateDocument, Arguments: `{"title":"Report","markdown":"![x](obj1)"}`}))
	h.up.Enqueue(testupstream.Text("Done."))
	r := h.do(`{"model":"svc-3","stream":false,"files":true,"messages":[{"role":"user","content":"Report"}],
		"objects":{"obj1":{"kind":"chart","source":"{}","title":"Sales"},"obj2":{"kind":"chart","source":"{}","title":"Old"}}}`, withUser(nil))
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var resp struct {
		Artifacts []wire.Artifact       `json:"artifacts"`
		Renames   []wire.ArtifactRename `json:"artifact_renames"`
		Removals  []wire.ArtifactRemove `json:"artifact_removals"`
	}
	if err := json.Unmarshal([]byte(r.body), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Artifacts) != 1 || len(resp.Renames) != 1 || resp.Renames[0] != (wire.ArtifactRename{ObjectID: "obj1", NewObjectID: "el1"}) ||
		len(resp.Removals) != 1 || resp.Removals[0].ObjectID != "obj2" {
		t.Fatalf("answer %s: want the artifact, the rename obj1 to el1 and the removal of obj2", r.body)
	}
}

// An objects map naming an id the account was never handed is refused
// before the backend is asked anything.
func TestNeverIssuedObjectIDRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{foldTool()}, ids: &issuedIDs{}})
	r := h.do(`{"model":"svc-3","stream":true,"files":true,"messages":[{"role":"user","content":"Update obj31"}],
		"objects":{"obj1":{"kind":"chart","source":"{}","title":"Sales"},"obj31":{"kind":"chart","source":"{}","title":"Made up"}}}`, withUser(nil))
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, `"invalid_objects"`) || !strings.Contains(r.body, "obj31") {
		t.Fatalf("status %d: %s; want 400 invalid_objects naming obj31", r.status, r.body)
	}
	if n := len(h.up.ChatRequests()); n != 0 {
		t.Errorf("%d backend requests for a refused request", n)
	}
}
