package wire

// Usage is the usage object (spec 2.5), on the last chunk of a stream or
// in a completion.
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
	Artifacts []Artifact         `json:"artifacts"`
	// ArtifactRenames and ArtifactRemovals are the stream's
	// artifact_rename and artifact_remove events, gathered in order, so
	// that a client that does not stream learns them too.
	ArtifactRenames  []ArtifactRename `json:"artifact_renames,omitempty"`
	ArtifactRemovals []ArtifactRemove `json:"artifact_removals,omitempty"`
	// SearchSources lists the web pages the assistant read, when it
	// searched or opened pages: the stream's search_sources events,
	// gathered, each URL once.
	SearchSources []Source `json:"search_sources,omitempty"`
	Usage         Usage    `json:"usage"`
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
