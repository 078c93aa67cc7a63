// Package wire holds every type a /v3 chat completion client receives:
// the chunk of an event stream and its delta with the event keys of the
// spec (act, step, step_data, reasoning_chars, artifact, artifact_remove,
// artifact_rename, search_sources, queue_position), the non-streaming
// completion, and the usage object. The translator writes them, the
// tools build the events they report (artifacts, steps, sources), and the
// upstream reader counts the characters of model activities in Chars.
//
// The JSON of these types is the public contract documented in
// docs/api.md; the golden transcripts in translator/testdata hold it
// byte for byte. A new delta key is a field of Delta, a line of Empty
// (and of Bare when it survives X-Progress-Stream: 0), a golden and a
// row in docs/api.md.
package wire

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
	Artifact       *Artifact       `json:"artifact,omitempty"`
	ArtifactRemove *ArtifactRemove `json:"artifact_remove,omitempty"`
	ArtifactRename *ArtifactRename `json:"artifact_rename,omitempty"`
	SearchSources  []Source        `json:"search_sources,omitempty"`
	QueuePosition  *int            `json:"queue_position,omitempty"`
}

// Bare keeps what X-Progress-Stream: 0 keeps: text and the artifact
// events. Removals and renames count as artifact events because a client
// needs them to keep its objects map right.
func (d Delta) Bare() Delta {
	return Delta{
		Role:           d.Role,
		Content:        d.Content,
		Artifact:       d.Artifact,
		ArtifactRemove: d.ArtifactRemove,
		ArtifactRename: d.ArtifactRename,
	}
}

// Empty reports whether d carries nothing, so that no chunk is sent
// for it.
func (d Delta) Empty() bool {
	return d.Role == "" && d.Content == nil && d.Act == nil && d.Step == nil && d.StepData == nil &&
		d.ReasoningChars == nil && d.Artifact == nil && d.ArtifactRemove == nil &&
		d.ArtifactRename == nil && len(d.SearchSources) == 0 && d.QueuePosition == nil
}
