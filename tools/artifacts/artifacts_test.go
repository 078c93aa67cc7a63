package artifacts

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/toolstest"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// fakeFiles keeps generated files in memory, or refuses with err.
type fakeFiles struct {
	mu    sync.Mutex
	files map[string][]byte
	names []string
	n     int
	err   error
}

func (f *fakeFiles) StoreGenerated(_ context.Context, account, name string, r io.Reader) (storage.File, error) {
	if f.err != nil {
		return storage.File{}, f.err
	}
	b, _ := io.ReadAll(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.n++
	id := fmt.Sprintf("file-%d", f.n)
	f.files[id] = b
	f.names = append(f.names, name)
	return storage.File{ID: id, Filename: name, Bytes: int64(len(b))}, nil
}

func (f *fakeFiles) Delete(_ context.Context, _, id string) (storage.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[id]; !ok {
		return storage.File{}, storage.ErrNotFound
	}
	delete(f.files, id)
	return storage.File{ID: id}, nil
}

// counter hands out ids like the store's per-account counters, and keeps
// what became of them as the store does.
type counter struct {
	obj, el int64
	states  map[string]storage.ObjectState
}

func (c *counter) NextObjectID(_ context.Context, _ string, class objectid.Class) (string, error) {
	if class == objectid.Element {
		c.el++
		return objectid.Format(class, c.el), nil
	}
	c.obj++
	return objectid.Format(class, c.obj), nil
}

func (c *counter) ObjectStates(_ context.Context, _ string, ids []string) (map[string]storage.ObjectState, error) {
	out := map[string]storage.ObjectState{}
	for _, id := range ids {
		st, ok := c.states[id]
		class, n, valid := objectid.Parse(id)
		last := c.obj
		if class == objectid.Element {
			last = c.el
		}
		st.Issued = ok || valid && n <= last
		out[id] = st
	}
	return out, nil
}

func (c *counter) SaveObject(_ context.Context, _, id, fileID string) (string, error) {
	if c.states == nil {
		c.states = map[string]storage.ObjectState{}
	}
	st := c.states[id]
	if st.Retired {
		return "", storage.ErrObjectRetired
	}
	old := st.FileID
	c.states[id] = storage.ObjectState{Issued: true, FileID: fileID}
	if old == fileID {
		return "", nil
	}
	return old, nil
}

func (c *counter) RetireObject(_ context.Context, _, id, renamedTo string) (string, error) {
	if c.states == nil {
		c.states = map[string]storage.ObjectState{}
	}
	st := c.states[id]
	if st.Retired {
		return "", nil
	}
	c.states[id] = storage.ObjectState{Issued: true, Retired: true, RenamedTo: renamedTo}
	if renamedTo == "" {
		return st.FileID, nil
	}
	c.states[renamedTo] = storage.ObjectState{Issued: true, FileID: st.FileID}
	return "", nil
}

type harness struct {
	t     *testing.T
	files *fakeFiles
	tools map[string]tools.Tool
	env   *tools.Env
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, files: &fakeFiles{}, tools: map[string]tools.Tool{}}
	all, err := New(Config{Files: h.files})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range all {
		h.tools[tl.Name()] = tl
	}
	h.env = &tools.Env{AccountID: "acct", IDs: &counter{}}
	return h
}

func (h *harness) call(name, args string) (tools.Result, error) {
	return h.tools[name].Execute(context.Background(), tools.Call{Name: name, Arguments: []byte(args), Env: h.env})
}

// mustCall is call for calls that must succeed.
func (h *harness) mustCall(name, args string) tools.Result {
	h.t.Helper()
	res, err := h.call(name, args)
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	return res
}

const barArgs = `{"title":"Revenue","spec":{"type":"bar","labels":["Q1","Q2"],"series":[{"name":"2026","values":[3,5]}]}}`

func TestCreateChart(t *testing.T) {
	h := newHarness(t)
	res := h.mustCall(tools.NameCreateChart, barArgs)
	if res.Object != "obj1" || len(res.Artifacts) != 1 {
		t.Fatalf("result %+v", res)
	}
	a := res.Artifacts[0]
	if a.Type != "chart" || a.ObjectID != "obj1" || a.FileID != "file-1" || a.Title != "Revenue" || a.MIMEType != "image/png" {
		t.Errorf("artifact %+v", a)
	}
	png, err := base64.StdEncoding.DecodeString(a.ImageBase64)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || !bytes.Equal(png, h.files.files["file-1"]) {
		t.Errorf("inline image is not the stored PNG")
	}
	if !strings.Contains(a.Source, `"type":"bar"`) || strings.Contains(a.Source, "\n") {
		t.Errorf("source %q: want the compact spec", a.Source)
	}
	if h.files.names[0] != "Revenue.png" {
		t.Errorf("file name %q", h.files.names[0])
	}
	if ref := h.env.Objects["obj1"]; ref.Kind != "chart" || ref.Source != a.Source {
		t.Errorf("objects map after create: %+v", h.env.Objects)
	}
}

func TestUpdateKeepsTheIDAndDeleteRetiresIt(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	res := h.mustCall(tools.NameUpdateObject, `{"object_id":"obj1","title":"Revenue by quarter","spec":{"type":"line","labels":["Q1","Q2"],"series":[{"name":"2026","values":[3,8]}]}}`)
	if a := res.Artifacts[0]; a.ObjectID != "obj1" || a.Title != "Revenue by quarter" || !strings.Contains(a.Source, `"line"`) || a.FileID != "file-2" {
		t.Errorf("updated artifact %+v", a)
	}
	res, err := h.call(tools.NameDeleteObject, `{"object_id":"obj1"}`)
	if err != nil || len(res.Removed) != 1 || res.Removed[0] != "obj1" {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	for _, name := range []string{tools.NameUpdateObject, tools.NameDeleteObject} {
		_, err := h.call(name, `{"object_id":"obj1"}`)
		var ce *tools.CallError
		if !errors.As(err, &ce) || !strings.Contains(ce.Message, "retired") {
			t.Errorf("%s of a deleted object: %v", name, err)
		}
	}
	// A new object never takes the retired id.
	if res, err := h.call(tools.NameCreateChart, barArgs); err != nil || res.Object != "obj2" {
		t.Errorf("next create: %+v, %v", res.Object, err)
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name, tool, args, want string
	}{
		{name: "invalid spec", tool: tools.NameCreateChart, args: `{"title":"x","spec":{"type":"donut","series":[{"name":"a","values":[1]}]}}`, want: "type"},
		{name: "no title", tool: tools.NameCreateChart, args: `{"title":" ","spec":{"type":"bar","labels":["a"],"series":[{"name":"a","values":[1]}]}}`, want: "title"},
		{name: "unknown argument", tool: tools.NameCreateChart, args: `{"title":"x","colour":"red","spec":{}}`, want: "invalid arguments"},
		{name: "document with no title", tool: tools.NameCreateDocument, args: `{"markdown":"# Results"}`, want: "title is required"},
		{name: "title too long", tool: tools.NameCreateWordDocument, args: `{"title":"` + strings.Repeat("t", 201) + `","markdown":"x"}`, want: "at most 200"},
		{name: "unknown diagram argument", tool: tools.NameCreateDiagram, args: `{"title":"x","source":"digraph { a -> b }","engine":"neato"}`, want: "invalid arguments"},
		{name: "unknown object", tool: tools.NameUpdateObject, args: `{"object_id":"obj9"}`, want: "no object obj9"},
		{name: "not an id", tool: tools.NameDeleteObject, args: `{"object_id":"file-1"}`, want: "not an object id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			_, err := h.call(tt.tool, tt.args)
			var ce *tools.CallError
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, tt.want) {
				t.Fatalf("error %v, want a message for the model about %q", err, tt.want)
			}
			if len(h.files.files) != 0 {
				t.Errorf("a refused call stored a file")
			}
		})
	}
}

func TestQuotaIsAToolFailure(t *testing.T) {
	h := newHarness(t)
	h.files.err = fmt.Errorf("commit: %w", storage.ErrTooManyBytes)
	_, err := h.call(tools.NameCreateChart, barArgs)
	var ce *tools.CallError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "storage is full") {
		t.Fatalf("error %v, want the model told that storage is full", err)
	}
}

func TestStoreFailureStillDeliversInline(t *testing.T) {
	h := newHarness(t)
	h.files.err = errors.New("disk on fire")
	res := h.mustCall(tools.NameCreateChart, barArgs)
	if a := res.Artifacts[0]; a.FileID != "" || a.ImageBase64 == "" || a.WithoutInline().ImageBase64 == "" {
		t.Errorf("artifact %+v: want inline bytes and no file id, kept in the JSON form", a)
	}
}

func TestCreateSpreadsheet(t *testing.T) {
	h := newHarness(t)
	res := h.mustCall(tools.NameCreateSpreadsheet, `{"title":"Sales","sheets":[{"name":"Q1","rows":[["Region","Revenue"],["North",142000],["Total","=SUM(B2:B2)"]]}]}`)
	a := res.Artifacts[0]
	if a.Type != "xlsx" || a.FileBase64 == "" || a.ImageBase64 != "" || !strings.Contains(a.Source, `"=SUM(B2:B2)"`) {
		t.Fatalf("artifact %+v", a)
	}
	if data := h.files.files[a.FileID]; !bytes.HasPrefix(data, []byte("PK")) {
		t.Errorf("stored file is not a zip package")
	}
	// Editing sheets keeps the id and the title.
	res, err := h.call(tools.NameUpdateObject, `{"object_id":"`+a.ObjectID+`","sheets":[{"name":"Q2","rows":[["Region","Revenue"],["South",98000]]}]}`)
	if err != nil || res.Artifacts[0].ObjectID != a.ObjectID || res.Artifacts[0].Title != "Sales" || !strings.Contains(res.Artifacts[0].Source, "South") {
		t.Fatalf("update: %+v, %v", res, err)
	}
}

// A document that embeds a standalone chart folds it in: the chart is
// renamed to an element and listed in consumed_object_ids.
func TestDocumentFoldsInAChart(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	res := h.mustCall(tools.NameCreateDocument, `{"title":"Q1 report","markdown":"# Results\n\nRevenue rose.\n\n![Revenue by quarter](obj1)\n"}`)
	a := res.Artifacts[0]
	if a.Type != "document" || a.ObjectID != "obj2" || a.MIMEType != "application/pdf" || a.FileID == "" {
		t.Fatalf("artifact %+v", a)
	}
	if len(res.Renamed) != 1 || res.Renamed[0] != (wire.ArtifactRename{ObjectID: "obj1", NewObjectID: "el1"}) {
		t.Fatalf("renamed %+v, want obj1 to el1", res.Renamed)
	}
	if len(a.ConsumedObjectIDs) != 1 || a.ConsumedObjectIDs[0] != "el1" {
		t.Errorf("consumed %v, want [el1]", a.ConsumedObjectIDs)
	}
	if pdfBytes := h.files.files[a.FileID]; !bytes.HasPrefix(pdfBytes, []byte("%PDF-")) {
		t.Errorf("stored file is not a PDF")
	}
	if h.env.Objects["obj1"].Kind != tools.Tombstone || h.env.Objects["el1"].Kind != "chart" {
		t.Errorf("objects after the fold: %+v", h.env.Objects)
	}
	// Embedding something that does not exist is the model's to fix.
	_, err := h.call(tools.NameCreateDocument, `{"title":"x","markdown":"![](obj7)"}`)
	var ce *tools.CallError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "obj7") || !strings.Contains(ce.Message, "el1") {
		t.Errorf("unknown embed: %v", err)
	}
}

func TestCreateWordDocument(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	res := h.mustCall(tools.NameCreateWordDocument, `{"title":"Brief","markdown":"# Brief\n\n- one\n- two\n\n![Revenue](obj1)"}`)
	a := res.Artifacts[0]
	if a.Type != "docx" || a.FileBase64 == "" || len(a.ConsumedObjectIDs) != 1 || !bytes.HasPrefix(h.files.files[a.FileID], []byte("PK")) {
		t.Fatalf("artifact %+v", a)
	}
	if h.files.names[len(h.files.names)-1] != "Brief.docx" {
		t.Errorf("file name %q", h.files.names[len(h.files.names)-1])
	}
}

func TestCreateDiagramAndEmbedIt(t *testing.T) {
	h := newHarness(t)
	res := h.mustCall(tools.NameCreateDiagram, `{"title":"Flow","language":"dot","source":"digraph { a -> b }","theme":"dark","aspect":"portrait"}`)
	a := res.Artifacts[0]
	if a.Type != "diagram" || a.Theme != "dark" || a.Aspect != "portrait" || a.Source != "digraph { a -> b }" || a.ImageBase64 == "" {
		t.Fatalf("artifact %+v", a)
	}
	if _, err := h.call(tools.NameCreateDiagram, `{"title":"Bad","language":"dot","source":"digraph { a -> }"}`); err == nil {
		t.Error("a DOT syntax error was accepted")
	} else if ce := new(tools.CallError); !errors.As(err, &ce) {
		t.Errorf("a DOT syntax error is not for the model: %v", err)
	}
	res, err := h.call(tools.NameCreateDocument, `{"title":"Doc","markdown":"![Flow](obj1)"}`)
	if err != nil || len(res.Renamed) != 1 || res.Renamed[0].ObjectID != "obj1" {
		t.Fatalf("embedding the diagram: %+v, %v", res.Renamed, err)
	}
}

func TestRenderReportsItsPhases(t *testing.T) {
	h := newHarness(t)
	p := &toolstest.Progress{}
	_, err := h.tools[tools.NameCreateChart].Execute(context.Background(), tools.Call{
		Name: tools.NameCreateChart, Arguments: []byte(barArgs), Env: h.env, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Statuses(); got != "render:active render:done store:active store:done" {
		t.Errorf("steps %q", got)
	}
	if len(p.Data) != 1 || !strings.Contains(p.Data[0].Content, `"bar"`) || len(p.Data[0].Images) != 1 {
		t.Errorf("step data %+v", p.Data)
	}
}
