// Package tools holds what the upstream model may call during a /v3 chat
// completion: the Tool contract, the Registry that decides which tools a
// request is offered, and the JSON schemas that make up the public tool
// contract (docs/tools.md). Concrete tools live in sub-packages.
package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// Tool is one function the upstream model may call. Implementations are
// safe for concurrent use: one Tool value serves every request.
type Tool interface {
	// Name is the function name offered to the model, such as "web_search".
	Name() string
	// Description tells the model when to call the tool.
	Description() string
	// Schema is the JSON schema of the arguments object.
	Schema() json.RawMessage
	// Execute runs one call. An error means the call failed: the client
	// sees the activity fail. The model is told the message of a
	// *CallError (so it can correct its arguments); any other error is
	// logged and the model learns only that the tool failed, because
	// such errors may carry internal details. Execute must return when
	// ctx is done.
	Execute(ctx context.Context, call Call) (Result, error)
}

// Labeler is implemented by tools that describe a call for the activity
// timeline ("Searching the web for …"). Tools without it are shown by
// name. The label is for display only; clients never parse it.
type Labeler interface {
	Label(args json.RawMessage) string
}

// Call is one invocation requested by the model.
type Call struct {
	ID        string          // tool-call id from the model
	Name      string          // function name
	Arguments json.RawMessage // JSON object as the model wrote it; may be invalid JSON
	Env       *Env            // the request the call belongs to; never nil

	// Progress receives phase rows of long runs. It may be nil; use
	// ReportStep and ReportData, which check.
	Progress ProgressSink
}

// ReportStep forwards s to the call's progress sink, if any. s.SID
// names the phase within the call.
func (c Call) ReportStep(s wire.Step) {
	if c.Progress != nil {
		c.Progress.Step(s)
	}
}

// ReportData forwards d to the call's progress sink, if any.
func (c Call) ReportData(d wire.StepData) {
	if c.Progress != nil {
		c.Progress.StepData(d)
	}
}

// ProgressSink receives live progress of a tool run. Calls may come from
// any goroutine the tool uses.
type ProgressSink interface {
	Step(wire.Step)
	StepData(wire.StepData)
}

// Env is what a tool knows about the request it serves.
type Env struct {
	AccountID string
	// EndUserID is the caller's end user (X-User-Id or body user); empty
	// when the caller sent none.
	EndUserID string
	// Objects is the request's objects map: the deliverables of earlier
	// turns, by object id. Nil when the client sent none. Tools that
	// create, change or delete objects update it, so that later calls of
	// the same request see them; calls of a request run one at a time.
	Objects map[string]ObjectRef
	// SearchOff is true when the request asked for skip_search. A tool
	// that fetches pages must then open only the URLs in Links.
	SearchOff bool
	// Links are the http(s) URLs found in the user's messages.
	Links []string
	// Images are the images the caller attached, in message order, for
	// tools that embed them.
	Images []Image
	// Elements are the caller's images of this request by the element id
	// they were registered as (el<N>), for documents that embed them.
	Elements map[string]Image
	// Location is the user's time zone (X-Timezone); UTC when unknown.
	Location *time.Location
	// IDs hands out object ids for new deliverables and keeps what
	// became of them; nil when the server has no allocator, in which
	// case tools that create objects fail.
	IDs storage.ObjectIDs
	// Renamed maps the standalone ids that were folded into a document,
	// but that the client still lists as live (it missed the rename), to
	// the element each became; see artifacts.Reconcile.
	Renamed map[string]string
}

// ObjectRef is an entry of the request's objects map: kind, source and
// title as the client echoes them from earlier artifact events. A deleted
// object has Kind "tombstone" and nothing else.
type ObjectRef struct {
	Kind   string `json:"kind"`
	Source string `json:"source,omitempty"`
	Title  string `json:"title,omitempty"`
	// Theme and Aspect are a diagram's, which its artifact carries beside
	// the source: known for a diagram made in this request, or echoed by
	// a client that sends them back; empty means light and landscape.
	Theme  string `json:"theme,omitempty"`
	Aspect string `json:"aspect,omitempty"`
}

// Tombstone is the kind of a deleted object in the objects map.
const Tombstone = "tombstone"

// Image is an image the caller attached. It is kept as standard,
// padded base64, the form in which the backend and the echoed artifact
// take it: an inline image as the caller sent it, an uploaded one
// encoded once. Only a tool that embeds the image decodes it (Bytes).
// The zero value is an empty image.
type Image struct {
	// MIME is the image's media type, as its bytes say.
	MIME string
	// b64 is the image in standard base64 with padding, no line breaks.
	b64 string
	// data is the image when its bytes are at hand; nil for an inline
	// image, which Bytes decodes.
	data []byte
}

// InlineImage returns the image whose bytes are b64, which must be
// standard base64 with padding and without line breaks: a data URL the
// request validated.
func InlineImage(mime, b64 string) Image { return Image{MIME: mime, b64: b64} }

// ImageOf returns the image of data, encoding its base64 now.
func ImageOf(mime string, data []byte) Image {
	return Image{MIME: mime, b64: base64.StdEncoding.EncodeToString(data), data: data}
}

// Base64 returns the image in standard base64 with padding.
func (i Image) Base64() string { return i.b64 }

// Bytes returns the image's bytes, decoding the base64 of an inline
// image on every call. The caller must not change them.
func (i Image) Bytes() ([]byte, error) {
	if i.data != nil {
		return i.data, nil
	}
	return base64.StdEncoding.DecodeString(i.b64)
}

// Result is the outcome of a successful call.
type Result struct {
	// Content is what the model reads as the tool's answer.
	Content string
	// Object is the id of the object the call produced, shown as act.obj.
	Object string
	// Artifacts finished by the call, sent to the client as artifact events.
	Artifacts []wire.Artifact
	// Removed lists object ids deleted or superseded by the call, sent
	// as artifact_remove events.
	Removed []string
	// Renamed lists objects reclassified by the call.
	Renamed []wire.ArtifactRename
	// Sources lists web pages the call read, for citations.
	Sources []wire.Source
}

// CallError is a failure whose message is meant for the model, such as
// invalid arguments. Err, when set, is the underlying cause for logs.
type CallError struct {
	Message string
	Err     error
}

func (e *CallError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *CallError) Unwrap() error { return e.Err }

// Failf returns a *CallError with a formatted message.
func Failf(format string, args ...any) error {
	return &CallError{Message: fmt.Sprintf(format, args...)}
}

// ModelMessage is the text the model is told about a failed call.
func ModelMessage(err error) string {
	var ce *CallError
	if errors.As(err, &ce) {
		return "error: " + ce.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "error: the tool took too long"
	}
	return "error: the tool failed"
}
