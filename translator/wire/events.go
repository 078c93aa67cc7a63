package wire

// Act is an activity timeline entry.
type Act struct {
	ID    int64  `json:"id"`
	Op    string `json:"op"`   // ActStart, ActTick, ActDone, ActFail
	Kind  string `json:"kind"` // ActModel or ActTool
	Label string `json:"label"`
	// MS is the duration, on done and fail only.
	MS *int64 `json:"ms,omitempty"`
	// Obj is the object the activity produced.
	Obj string `json:"obj,omitempty"`
	// Chars are live counters of a model activity (Revision B).
	Chars *Chars `json:"chars,omitempty"`
}

// Activity ops and kinds.
const (
	ActStart = "start"
	ActTick  = "tick"
	ActDone  = "done"
	ActFail  = "fail"
	ActModel = "model"
	ActTool  = "tool"
)

// Chars counts what a model activity produced, in characters: reasoning,
// answer text and tool-call arguments.
type Chars struct {
	Think int `json:"think"`
	Text  int `json:"text"`
	Args  int `json:"args"`
}

// Step is a phase row of a long tool run (Revision B). A tool reports
// SID unique within its call; the orchestrator makes it unique within
// the response before it is sent.
type Step struct {
	SID    string `json:"sid"`
	Label  string `json:"label"`
	Status string `json:"status"` // StepActive, StepDone or StepError
	Detail string `json:"detail"`
}

// Step statuses.
const (
	StepActive = "active"
	StepDone   = "done"
	StepError  = "error"
)

// StepData is intermediate output of a step (Revision B): text of at
// most MaxStepDataChars characters (the orchestrator cuts longer text)
// and base64 images. SID is the step's, as in Step.
type StepData struct {
	SID     string   `json:"sid"`
	Label   string   `json:"label"`
	Content string   `json:"content"`
	Images  []string `json:"images"`
}

// MaxStepDataChars bounds StepData.Content (spec 6).
const MaxStepDataChars = 20_000

// Artifact is a finished deliverable (spec 2.6). Fields not used by a type
// stay empty and are omitted from JSON.
type Artifact struct {
	Type              string   `json:"type"` // document, xlsx, docx, diagram, chart, image
	ObjectID          string   `json:"object_id"`
	Title             string   `json:"title"`
	FileID            string   `json:"file_id,omitempty"`
	EmbedID           string   `json:"embed_id,omitempty"`
	MIMEType          string   `json:"mime_type,omitempty"`
	FileBase64        string   `json:"file_base64,omitempty"`
	ImageBase64       string   `json:"image_base64,omitempty"`
	Source            string   `json:"source,omitempty"`
	Theme             string   `json:"theme,omitempty"`
	Aspect            string   `json:"aspect,omitempty"`
	ConsumedObjectIDs []string `json:"consumed_object_ids,omitempty"`
}

// WithoutInline returns a copy without inline base64, the form used by
// non-streaming responses. Bytes are kept when there is no file id to
// fetch them by, as the spec asks when storing the file failed.
func (a Artifact) WithoutInline() Artifact {
	if a.FileID != "" {
		a.FileBase64 = ""
		a.ImageBase64 = ""
	}
	return a
}

// ArtifactRemove is the artifact_remove event: an object deleted or
// superseded.
type ArtifactRemove struct {
	ObjectID string `json:"object_id"`
}

// ArtifactRename is the artifact_rename event: an object reclassified
// under a new id.
type ArtifactRename struct {
	ObjectID    string `json:"object_id"`
	NewObjectID string `json:"new_object_id"`
}

// Source is a web page the assistant read (search_sources).
type Source struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}
