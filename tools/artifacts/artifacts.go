// Package artifacts holds the tools that make deliverables: create_chart,
// create_diagram, create_document (PDF), create_word_document (docx) and
// create_spreadsheet (xlsx), and the object lifecycle around them:
// update_object re-renders an object in place, delete_object retires it,
// and a document that embeds a standalone chart or diagram folds it in
// as an element (artifact_rename, consumed_object_ids).
//
// Every deliverable gets an object id from the account's counter, is
// stored through the Files API (same quotas and retention as uploads) and
// is sent to the client as an artifact with its editable source, so that
// a later turn can echo it in the objects map and the model edits it
// instead of rebuilding it. The renderers themselves are the plain
// libraries under tools/render.
package artifacts

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/xlsx"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// FileStore keeps generated files. *files.Service is one; its errors
// storage.ErrTooManyFiles and storage.ErrTooManyBytes mean the account's
// quota is full.
type FileStore interface {
	StoreGenerated(ctx context.Context, accountID, filename string, r io.Reader) (storage.File, error)
	// Delete removes a stored file: a deleted object's, or a version an
	// update replaced.
	Delete(ctx context.Context, accountID, id string) (storage.File, error)
}

// Config is what the artifact tools share.
type Config struct {
	// Files stores the rendered files. Required.
	Files FileStore
	// Paper is the page size of PDF documents: "A4" or "Letter".
	// Default: A4.
	Paper string
	// Now dates documents. Default: time.Now.
	Now func() time.Time
}

// New returns every artifact tool, to be registered with the FileOutput
// capability.
func New(cfg Config) ([]tools.Tool, error) {
	if cfg.Files == nil {
		return nil, errors.New("artifacts: no file store")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &shared{cfg: cfg, pictures: &pictures{}}
	out := make([]tools.Tool, 0, len(kinds)+2)
	for _, k := range kinds {
		out = append(out, &createTool{s: s, k: k})
	}
	return append(out, &updateTool{s: s}, &deleteTool{s: s}), nil
}

type shared struct {
	cfg      Config
	pictures *pictures
}

// kind is one type of deliverable.
type kind struct {
	tool        string // the create_* tool
	typ         string // artifact type and objects-map kind
	description string
	ext, mime   string
	image       bool // inline as image_base64 rather than file_base64
	// source decodes a create call's arguments into the title and the
	// editable source the artifact carries.
	source func(args json.RawMessage) (title string, src source, err error)
	// update merges update_object's arguments into an existing source.
	update func(old source, args json.RawMessage) (source, error)
	// render turns a source into the file.
	render func(ctx context.Context, r *renderer, title string, src source) (rendered, error)
}

// source is an object's editable form: the text the artifact's "source"
// field carries, and the diagram's theme and aspect, which travel in
// fields of their own.
type source struct {
	Text   string
	Theme  string
	Aspect string
	// workbook is the spreadsheet Text holds, when the call decoded it
	// already, so that rendering does not decode a large workbook twice.
	workbook *xlsx.Workbook
}

type rendered struct {
	data     []byte
	embedded []string // object ids a document embeds
}

// sourceError turns a renderer's complaint into one the model can act on.
func sourceError(err error) error {
	var se *render.SourceError
	if errors.As(err, &se) {
		return &tools.CallError{Message: se.Message}
	}
	return err
}

// decodeArgs decodes a call's arguments strictly into v.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return tools.Failf("invalid arguments: %v", err)
	}
	return nil
}

// titled is the title the arguments of every create tool carry; they
// embed it.
type titled struct {
	Title string `json:"title"`
}

func (t titled) title() string { return t.Title }

// decodeTitled decodes a create call's arguments strictly into v and
// returns their title, checked.
func decodeTitled(args json.RawMessage, v interface{ title() string }) (string, error) {
	if err := decodeArgs(args, v); err != nil {
		return "", err
	}
	return requireTitle(v.title())
}

func requireTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return "", tools.Failf("title is required")
	}
	if len([]rune(title)) > 200 {
		return "", tools.Failf("title must be at most 200 characters")
	}
	return title, nil
}

// make renders src as a new or updated object id and stores it.
func (s *shared) make(ctx context.Context, call tools.Call, k *kind, id, title string, src source) (tools.Result, error) {
	updating := id != ""
	r := &renderer{s: s, env: call.Env, call: call}
	call.ReportStep(wire.Step{SID: "render", Label: "Rendering " + k.typ, Status: wire.StepActive})
	out, err := k.render(ctx, r, title, src)
	if err != nil {
		call.ReportStep(wire.Step{SID: "render", Label: "Rendering " + k.typ, Status: wire.StepError})
		return tools.Result{}, sourceError(err)
	}
	call.ReportStep(wire.Step{SID: "render", Label: "Rendering " + k.typ, Status: wire.StepDone,
		Detail: fmt.Sprintf("%d bytes", len(out.data))})
	// The source rendered, and the picture for charts and diagrams, as
	// the step's data (Revision B); the sink cuts long text.
	data := wire.StepData{SID: "render", Label: title, Content: src.Text}
	if k.image {
		data.Images = []string{base64.StdEncoding.EncodeToString(out.data)}
	}
	call.ReportData(data)
	if id == "" {
		if call.Env.IDs == nil {
			return tools.Result{}, errors.New("artifacts: no object id allocator")
		}
		if id, err = call.Env.IDs.NextObjectID(ctx, call.Env.AccountID, objectid.Final); err != nil {
			return tools.Result{}, fmt.Errorf("artifacts: allocating an object id: %w", err)
		}
	}
	a := wire.Artifact{Type: k.typ, ObjectID: id, Title: title, MIMEType: k.mime, Source: src.Text}
	if k.typ == "diagram" {
		a.Theme, a.Aspect = src.Theme, src.Aspect
	}
	res := tools.Result{Object: id}
	// Standalone finals folded into a document become its elements; one
	// folded before (the client missed the rename) is told again under
	// the element it became, never renamed twice.
	renamed := map[string]string{}
	for _, eid := range out.embedded {
		if el, ok := call.Env.Renamed[eid]; ok {
			renamed[eid] = el
			res.Renamed = append(res.Renamed, wire.ArtifactRename{ObjectID: eid, NewObjectID: el})
			a.ConsumedObjectIDs = append(a.ConsumedObjectIDs, el)
			continue
		}
		if _, n, ok := objectid.Parse(eid); ok && strings.HasPrefix(eid, "obj") && n > 0 {
			ref := call.Env.Objects[eid]
			if ref.Kind != "chart" && ref.Kind != "diagram" {
				a.ConsumedObjectIDs = append(a.ConsumedObjectIDs, eid)
				continue
			}
			el, err := call.Env.IDs.NextObjectID(ctx, call.Env.AccountID, objectid.Element)
			if err != nil {
				return tools.Result{}, fmt.Errorf("artifacts: allocating an element id: %w", err)
			}
			if _, err := call.Env.IDs.RetireObject(ctx, call.Env.AccountID, eid, el); err != nil {
				return tools.Result{}, fmt.Errorf("artifacts: folding %s in as %s: %w", eid, el, err)
			}
			res.Renamed = append(res.Renamed, wire.ArtifactRename{ObjectID: eid, NewObjectID: el})
			renamed[eid] = el
			if call.Env.Renamed == nil {
				call.Env.Renamed = map[string]string{}
			}
			call.Env.Renamed[eid] = el
			call.Env.Objects[el] = ref
			call.Env.Objects[eid] = tools.ObjectRef{Kind: tools.Tombstone}
			a.ConsumedObjectIDs = append(a.ConsumedObjectIDs, el)
			continue
		}
		a.ConsumedObjectIDs = append(a.ConsumedObjectIDs, eid)
	}
	src.Text = rewriteEmbeds(src.Text, renamed)
	a.Source = src.Text
	call.ReportStep(wire.Step{SID: "store", Label: "Saving the file", Status: wire.StepActive})
	f, err := s.cfg.Files.StoreGenerated(ctx, call.Env.AccountID, filename(title, k.ext), bytes.NewReader(out.data))
	switch {
	case errors.Is(err, storage.ErrTooManyFiles), errors.Is(err, storage.ErrTooManyBytes):
		call.ReportStep(wire.Step{SID: "store", Label: "Saving the file", Status: wire.StepError, Detail: "storage quota reached"})
		return tools.Result{}, &tools.CallError{Message: "the account's file storage is full, so the " + k.typ +
			" was not created; tell the user to delete files (GET/DELETE /v3/files) and try again", Err: err}
	case err != nil:
		// The spec's rare case: the artifact still goes out, inline.
		call.ReportStep(wire.Step{SID: "store", Label: "Saving the file", Status: wire.StepError})
	default:
		a.FileID = f.ID
		call.ReportStep(wire.Step{SID: "store", Label: "Saving the file", Status: wire.StepDone, Detail: f.ID})
	}
	// The new version replaces the stored file of the one before, which
	// is deleted: an object holds one file of the quota, however often
	// it is edited.
	// An update whose new version could not be stored keeps the file of
	// the version before, rather than leaving the object none.
	var replaced string
	var saveErr error
	if call.Env.IDs != nil && (a.FileID != "" || !updating) {
		replaced, saveErr = call.Env.IDs.SaveObject(ctx, call.Env.AccountID, id, a.FileID)
	}
	switch {
	case errors.Is(saveErr, storage.ErrObjectRetired):
		s.deleteFile(ctx, call.Env.AccountID, a.FileID)
		return tools.Result{}, tools.Failf("%s was deleted meanwhile; its id is retired and cannot be used again", id)
	case saveErr != nil:
		s.deleteFile(ctx, call.Env.AccountID, a.FileID)
		return tools.Result{}, fmt.Errorf("artifacts: recording %s: %w", id, saveErr)
	}
	s.deleteFile(ctx, call.Env.AccountID, replaced)
	encoded := base64.StdEncoding.EncodeToString(out.data)
	if k.image {
		a.ImageBase64 = encoded
	} else {
		a.FileBase64 = encoded
	}
	if call.Env.Objects == nil {
		call.Env.Objects = map[string]tools.ObjectRef{}
	}
	call.Env.Objects[id] = tools.ObjectRef{Kind: k.typ, Source: src.Text, Title: title, Theme: a.Theme, Aspect: a.Aspect}
	res.Artifacts = []wire.Artifact{a}
	res.Content = fmt.Sprintf("Created %s %q as %s.", k.typ, title, id)
	if len(res.Renamed) > 0 {
		res.Content += " Embedded objects became its elements:"
		for _, rn := range res.Renamed {
			res.Content += " " + rn.ObjectID + " is now " + rn.NewObjectID + ";"
		}
	}
	if err != nil {
		res.Content += " (It could not be saved for download; the user received it inline.)"
	}
	return res, nil
}

// filename is the title as a file name with the extension.
func filename(title, ext string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r < 0x20, strings.ContainsRune(`/\:*?"<>|`, r):
			return '_'
		}
		return r
	}, strings.TrimSpace(title))
	if len([]rune(name)) > 120 {
		name = string([]rune(name)[:120])
	}
	if name == "" {
		name = "untitled"
	}
	return name + "." + ext
}
