package translator

import (
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/translator/upstream"

	"github.com/switchyardhq/switchyard/tools"
)

// Chunk is a chat.completion.chunk as sent to the client.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"` // always "chat.completion.chunk"
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is choices[0] of a chunk. FinishReason is null until the
// last content chunk.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is choices[0].delta: the standard role and content plus the
// event keys of spec section 6. At most a few are set on one chunk.
type Delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`

	Act            *Act            `json:"act,omitempty"`
	Step           *Step           `json:"step,omitempty"`      // Revision B
	StepData       *StepData       `json:"step_data,omitempty"` // Revision B
	ReasoningChars *int            `json:"reasoning_chars,omitempty"`
	Artifact       *tools.Artifact `json:"artifact,omitempty"`
	ArtifactRemove *ArtifactRemove `json:"artifact_remove,omitempty"`
	ArtifactRename *tools.Rename   `json:"artifact_rename,omitempty"`
	SearchSources  []tools.Source  `json:"search_sources,omitempty"`
	QueuePosition  *int            `json:"queue_position,omitempty"`
}

// bare keeps what X-Progress-Stream: 0 keeps: text and the artifact
// events. Removals and renames count as artifact events because a client
// needs them to keep its objects map right.
func (d Delta) bare() Delta {
	return Delta{
		Role:           d.Role,
		Content:        d.Content,
		Artifact:       d.Artifact,
		ArtifactRemove: d.ArtifactRemove,
		ArtifactRename: d.ArtifactRename,
	}
}

func (d Delta) empty() bool {
	return d.Role == "" && d.Content == nil && d.Act == nil && d.Step == nil && d.StepData == nil &&
		d.ReasoningChars == nil && d.Artifact == nil && d.ArtifactRemove == nil &&
		d.ArtifactRename == nil && len(d.SearchSources) == 0 && d.QueuePosition == nil
}

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
	Chars *upstream.Chars `json:"chars,omitempty"`
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

// Step is a phase row of a long tool run (Revision B).
type Step struct {
	SID    string `json:"sid"`
	Label  string `json:"label"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// StepData is intermediate output of a step (Revision B).
type StepData struct {
	SID     string   `json:"sid"`
	Label   string   `json:"label"`
	Content string   `json:"content"`
	Images  []string `json:"images"`
}

// maxStepDataChars bounds StepData.Content (spec 6).
const maxStepDataChars = 20_000

func clipStepData(s string) string {
	if utf8.RuneCountInString(s) <= maxStepDataChars {
		return s
	}
	return clip.Runes(s, maxStepDataChars)
}

// ArtifactRemove is the artifact_remove event.
type ArtifactRemove struct {
	ObjectID string `json:"object_id"`
}

// Usage is the usage object (spec 2.5).
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// AnswerTokens counts the visible answer only (Revision A).
	AnswerTokens *int64 `json:"answer_tokens,omitempty"`
	// CostCents is sent with X-Include-Cost: 1.
	CostCents *int64 `json:"cost_cents,omitempty"`
}

// Completion is the non-streaming response (spec 2.2).
type Completion struct {
	ID        string             `json:"id"`
	Object    string             `json:"object"` // always "chat.completion"
	Created   int64              `json:"created"`
	Model     string             `json:"model"`
	Choices   []CompletionChoice `json:"choices"`
	Artifacts []tools.Artifact   `json:"artifacts"`
	// SearchSources lists the web pages the assistant read, when it
	// searched or opened pages: the stream's search_sources events,
	// gathered, each URL once.
	SearchSources []tools.Source `json:"search_sources,omitempty"`
	Usage         Usage          `json:"usage"`
}

// CompletionChoice is choices[0] of a Completion.
type CompletionChoice struct {
	Index        int               `json:"index"`
	Message      CompletionMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
}

// CompletionMessage is the assistant's answer.
type CompletionMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Refusal is always null; OpenAI's SDKs expect the key.
	Refusal *string `json:"refusal"`
}

func ptr[T any](v T) *T { return &v }
