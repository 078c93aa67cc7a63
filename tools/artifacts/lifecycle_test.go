package artifacts

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/wire"
)

const foldArgs = `{"title":"Q1 report","markdown":"# Results\n\n![Revenue by quarter](obj1)\n"}`

// After a chart is folded into a document, the document's source names
// the element, so that changing only its title re-renders it.
func TestFoldRewritesTheDocumentSource(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	res := h.mustCall(tools.NameCreateDocument, foldArgs)
	if src := res.Artifacts[0].Source; !strings.Contains(src, "](el1)") || strings.Contains(src, "obj1") {
		t.Fatalf("document source %q, want the embed rewritten to el1", src)
	}
	if src := h.env.Objects["obj2"].Source; !strings.Contains(src, "](el1)") {
		t.Fatalf("objects map source %q, want el1", src)
	}
	res, err := h.call(tools.NameUpdateObject, `{"object_id":"obj2","title":"Q1 report, final"}`)
	if err != nil {
		t.Fatalf("title-only update after the fold: %v", err)
	}
	if a := res.Artifacts[0]; a.Title != "Q1 report, final" || len(a.ConsumedObjectIDs) != 1 || a.ConsumedObjectIDs[0] != "el1" {
		t.Errorf("updated artifact %+v", a)
	}
	if len(res.Renamed) != 0 {
		t.Errorf("a title change renamed %+v", res.Renamed)
	}
}

// nextRequest starts a new request of the same account whose client
// sends objects, as the orchestrator's prepare does.
func (h *harness) nextRequest(objects map[string]tools.ObjectRef) error {
	h.env = &tools.Env{AccountID: "acct", IDs: h.env.IDs, Objects: objects}
	return Reconcile(context.Background(), h.env)
}

// A client that missed the tombstone and the rename of a folded chart
// still lists it as live; embedding it again does not fold it a second
// time.
func TestMissedTombstoneDoesNotRenameTwice(t *testing.T) {
	h := newHarness(t)
	chart := h.mustCall(tools.NameCreateChart, barArgs).Artifacts[0]
	h.mustCall(tools.NameCreateDocument, foldArgs)
	stale := map[string]tools.ObjectRef{"obj1": {Kind: "chart", Source: chart.Source, Title: chart.Title}}
	if err := h.nextRequest(stale); err != nil {
		t.Fatal(err)
	}
	res := h.mustCall(tools.NameCreateDocument, `{"title":"Q1 memo","markdown":"![Revenue](obj1)"}`)
	a := res.Artifacts[0]
	if len(a.ConsumedObjectIDs) != 1 || a.ConsumedObjectIDs[0] != "el1" {
		t.Errorf("consumed %v, want the element the chart already became, el1", a.ConsumedObjectIDs)
	}
	for _, rn := range res.Renamed {
		if rn != (wire.ArtifactRename{ObjectID: "obj1", NewObjectID: "el1"}) {
			t.Errorf("rename %+v: obj1 became el1 once and for all", rn)
		}
	}
	if c := h.env.IDs.(*counter); c.el != 1 {
		t.Errorf("%d element ids handed out, want 1", c.el)
	}
	if !strings.Contains(a.Source, "(el1)") {
		t.Errorf("source %q, want el1", a.Source)
	}
	if h.env.Objects["obj1"].Kind != tools.Tombstone {
		t.Errorf("obj1 is %+v after reconciling, want a tombstone", h.env.Objects["obj1"])
	}
}

// A client that missed a deletion cannot edit or embed the deleted
// object.
func TestMissedDeletionStaysDeleted(t *testing.T) {
	h := newHarness(t)
	chart := h.mustCall(tools.NameCreateChart, barArgs).Artifacts[0]
	h.mustCall(tools.NameDeleteObject, `{"object_id":"obj1"}`)
	if err := h.nextRequest(map[string]tools.ObjectRef{"obj1": {Kind: "chart", Source: chart.Source, Title: chart.Title}}); err != nil {
		t.Fatal(err)
	}
	_, err := h.call(tools.NameUpdateObject, `{"object_id":"obj1","title":"Back"}`)
	var ce *tools.CallError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "retired") {
		t.Errorf("update of a deleted object: %v", err)
	}
}

// Ids the account was never handed are refused before anything runs.
func TestNeverIssuedIDsAreRefused(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	err := h.nextRequest(map[string]tools.ObjectRef{
		"obj1":  {Kind: "chart", Source: "{}", Title: "x"},
		"obj31": {Kind: "chart", Source: "{}", Title: "y"},
	})
	var unknown *UnknownObjectsError
	if !errors.As(err, &unknown) || len(unknown.IDs) != 1 || unknown.IDs[0] != "obj31" {
		t.Fatalf("Reconcile = %v, want obj31 refused", err)
	}
	if !strings.Contains(err.Error(), "obj31") {
		t.Errorf("message %q does not name the id", err)
	}
}

// delete_object deletes the stored file; an update deletes the version
// it replaces, so that neither counts against the account's quota.
func TestStoredFilesFollowTheObject(t *testing.T) {
	h := newHarness(t)
	first := h.mustCall(tools.NameCreateChart, barArgs).Artifacts[0].FileID
	second := h.mustCall(tools.NameUpdateObject, `{"object_id":"obj1","title":"Revenue, revised"}`).Artifacts[0].FileID
	if _, ok := h.files.files[first]; ok {
		t.Errorf("superseded version %s is still stored", first)
	}
	if _, ok := h.files.files[second]; !ok {
		t.Fatalf("current version %s is not stored", second)
	}
	h.mustCall(tools.NameDeleteObject, `{"object_id":"obj1"}`)
	if len(h.files.files) != 0 {
		t.Errorf("files left after delete_object: %v", h.files.names)
	}
}

// A folded chart keeps its file under its element id: updating the
// element replaces that file.
func TestFoldedChartKeepsItsFile(t *testing.T) {
	h := newHarness(t)
	chartFile := h.mustCall(tools.NameCreateChart, barArgs).Artifacts[0].FileID
	h.mustCall(tools.NameCreateDocument, foldArgs)
	if _, ok := h.files.files[chartFile]; !ok {
		t.Fatalf("the folded chart's file was deleted")
	}
	h.mustCall(tools.NameUpdateObject, `{"object_id":"el1","title":"Revenue, revised"}`)
	if _, ok := h.files.files[chartFile]; ok {
		t.Errorf("the element's superseded file is still stored")
	}
}

// An update whose new version cannot be stored keeps the stored file of
// the version before.
func TestUpdateThatCannotBeStoredKeepsTheLastFile(t *testing.T) {
	h := newHarness(t)
	first := h.mustCall(tools.NameCreateChart, barArgs).Artifacts[0].FileID
	h.files.err = errors.New("disk on fire")
	if a := h.mustCall(tools.NameUpdateObject, `{"object_id":"obj1","title":"Revenue, revised"}`).Artifacts[0]; a.FileID != "" {
		t.Fatalf("artifact %+v, want no file id", a)
	}
	h.files.err = nil
	if _, ok := h.files.files[first]; !ok {
		t.Errorf("the last stored version %s was deleted", first)
	}
	if st := h.env.IDs.(*counter).states["obj1"]; st.FileID != first {
		t.Errorf("obj1's file is %q, want %s", st.FileID, first)
	}
}
