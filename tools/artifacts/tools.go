package artifacts

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/tools"
)

// createTool is one create_* tool.
type createTool struct {
	s *shared
	k *kind
}

func (t *createTool) Name() string            { return t.k.tool }
func (t *createTool) Description() string     { return t.k.description }
func (t *createTool) Schema() json.RawMessage { return tools.Schemas[t.k.tool] }

// Label implements tools.Labeler.
func (t *createTool) Label(args json.RawMessage) string {
	var a struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(args, &a)
	if a.Title == "" {
		return "Creating a " + t.k.typ
	}
	return fmt.Sprintf("Creating %s “%s”", t.k.typ, clip.Ellipsis(a.Title, 60))
}

// Execute implements tools.Tool.
func (t *createTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	title, src, err := t.k.source(call.Arguments)
	if err != nil {
		return tools.Result{}, err
	}
	return t.s.make(ctx, call, t.k, "", title, src)
}

// updateTool is update_object.
type updateTool struct{ s *shared }

func (t *updateTool) Name() string { return tools.NameUpdateObject }
func (t *updateTool) Description() string {
	return "Change a deliverable made earlier (listed in the conversation's objects) in place: it keeps its id. " +
		"Send the whole new content for its kind and, optionally, a new title."
}
func (t *updateTool) Schema() json.RawMessage { return tools.Schemas[tools.NameUpdateObject] }

// Label implements tools.Labeler.
func (t *updateTool) Label(args json.RawMessage) string { return objectLabel("Updating", args) }

// Execute implements tools.Tool.
func (t *updateTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var head struct {
		ID    string `json:"object_id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal(call.Arguments, &head); err != nil {
		return tools.Result{}, tools.Failf("invalid arguments: %v", err)
	}
	ref, err := live(call.Env, head.ID)
	if err != nil {
		return tools.Result{}, err
	}
	k := kindOf(ref.Kind)
	if k == nil {
		return tools.Result{}, tools.Failf("%s is a %s, which cannot be edited; create a new deliverable instead", head.ID, ref.Kind)
	}
	src, err := k.update(source{Text: ref.Source, Theme: ref.Theme, Aspect: ref.Aspect}, call.Arguments)
	if err != nil {
		return tools.Result{}, err
	}
	title := ref.Title
	if head.Title != "" {
		if title, err = requireTitle(head.Title); err != nil {
			return tools.Result{}, err
		}
	}
	res, err := t.s.make(ctx, call, k, head.ID, title, src)
	if err == nil {
		res.Content = fmt.Sprintf("Updated %s %q (%s).", k.typ, title, head.ID)
	}
	return res, err
}

// deleteTool is delete_object.
type deleteTool struct{ s *shared }

func (t *deleteTool) Name() string { return tools.NameDeleteObject }
func (t *deleteTool) Description() string {
	return "Delete a deliverable made earlier (listed in the conversation's objects). Its id is retired for good."
}
func (t *deleteTool) Schema() json.RawMessage { return tools.Schemas[tools.NameDeleteObject] }

// Label implements tools.Labeler.
func (t *deleteTool) Label(args json.RawMessage) string { return objectLabel("Deleting", args) }

// objectLabel is the activity label of a call on an existing object.
func objectLabel(verb string, args json.RawMessage) string {
	var a struct {
		ID string `json:"object_id"`
	}
	_ = json.Unmarshal(args, &a)
	return verb + " " + clip.Ellipsis(a.ID, 60)
}

// Execute implements tools.Tool.
func (t *deleteTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a struct {
		ID string `json:"object_id"`
	}
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return tools.Result{}, err
	}
	if _, err := live(call.Env, a.ID); err != nil {
		return tools.Result{}, err
	}
	if call.Env.IDs != nil {
		freed, err := call.Env.IDs.RetireObject(ctx, call.Env.AccountID, a.ID, "")
		if err != nil {
			return tools.Result{}, fmt.Errorf("artifacts: deleting %s: %w", a.ID, err)
		}
		// The stored file goes with the object: not downloadable, not
		// in the quota.
		t.s.deleteFile(ctx, call.Env.AccountID, freed)
	}
	call.Env.Objects[a.ID] = tools.ObjectRef{Kind: tools.Tombstone}
	return tools.Result{Content: "Deleted " + a.ID + ". Its id is retired.", Object: a.ID, Removed: []string{a.ID}}, nil
}

// live returns the object id names in the request's objects, refusing
// ids that are malformed, unknown or deleted.
func live(env *tools.Env, id string) (tools.ObjectRef, error) {
	if _, _, ok := objectid.Parse(id); !ok {
		return tools.ObjectRef{}, tools.Failf("%q is not an object id (obj<N> or el<N>)", clip.Ellipsis(id, 60))
	}
	ref, ok := env.Objects[id]
	switch {
	case !ok:
		return tools.ObjectRef{}, tools.Failf("there is no object %s in this conversation", id)
	case ref.Kind == tools.Tombstone:
		return tools.ObjectRef{}, tools.Failf("%s was deleted; its id is retired and cannot be used again", id)
	}
	return ref, nil
}
