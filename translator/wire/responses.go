package wire

// Response is a /v3/responses answer: the Responses API's response object,
// with the /v3 extras of a chat completion (artifacts, renames, removals,
// search_sources) as members beside output, under the same names. The
// SDKs' typed parsers keep the members they know and leave these to the
// raw JSON. response.created and response.completed carry one too.
type Response struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"` // always "response"
	CreatedAt         int64              `json:"created_at"`
	Status            string             `json:"status"` // ResponseInProgress, ResponseCompleted, ResponseIncomplete
	Error             *ResponseError     `json:"error"`
	IncompleteDetails *IncompleteDetails `json:"incomplete_details"`
	Model             string             `json:"model"`
	Output            []OutputMessage    `json:"output"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	ToolChoice        string             `json:"tool_choice"` // always "auto": the assistant picks its tools
	Tools             []struct{}         `json:"tools"`       // always empty: the client offers none
	Usage             *ResponseUsage     `json:"usage"`

	Artifacts        []Artifact       `json:"artifacts,omitempty"`
	ArtifactRenames  []ArtifactRename `json:"artifact_renames,omitempty"`
	ArtifactRemovals []ArtifactRemove `json:"artifact_removals,omitempty"`
	SearchSources    []Source         `json:"search_sources,omitempty"`
}

// Response statuses.
const (
	ResponseInProgress = "in_progress"
	ResponseCompleted  = "completed"
	ResponseIncomplete = "incomplete"
)

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails tells why a response is incomplete:
// "max_output_tokens" when the answer hit the token bound.
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

// OutputMessage is the one output item of a /v3 response: the assistant's
// message, its text in one output_text part.
type OutputMessage struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`   // always "message"
	Status  string       `json:"status"` // in_progress, completed or incomplete
	Role    string       `json:"role"`   // always "assistant"
	Content []OutputText `json:"content"`
}

// OutputText is an output_text content part.
type OutputText struct {
	Type        string     `json:"type"` // always "output_text"
	Text        string     `json:"text"`
	Annotations []struct{} `json:"annotations"` // always empty
	Logprobs    []struct{} `json:"logprobs"`    // always empty
}

// NewOutputText is an output_text part holding text.
func NewOutputText(text string) OutputText {
	return OutputText{Type: "output_text", Text: text, Annotations: []struct{}{}, Logprobs: []struct{}{}}
}

// ResponseUsage is the Responses API's usage, over every round of the
// tool loop, with the /v3 additions of Usage (answer_tokens in Revision A,
// cost_cents with X-Include-Cost: 1).
type ResponseUsage struct {
	InputTokens         int64               `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int64               `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int64               `json:"total_tokens"`
	AnswerTokens        *int64              `json:"answer_tokens,omitempty"`
	CostCents           *int64              `json:"cost_cents,omitempty"`
}

// InputTokensDetails is always zero: backends do not report cached
// tokens in a form the gateway reads.
type InputTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// OutputTokensDetails is always zero: reasoning is counted in
// output_tokens.
type OutputTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// ResponseUsageOf is u in the Responses API's form.
func ResponseUsageOf(u Usage) *ResponseUsage {
	return &ResponseUsage{
		InputTokens:  u.PromptTokens,
		OutputTokens: u.CompletionTokens,
		TotalTokens:  u.TotalTokens,
		AnswerTokens: u.AnswerTokens,
		CostCents:    u.CostCents,
	}
}

// ResponseEventPrefix starts the type of every event of a /v3/responses
// stream that carries a /v3 delta key: "response.switchyard.artifact"
// carries the artifact key, "response.switchyard.act" the act key, and so
// on for each key of Delta but role and content. The official SDKs' stream
// parsers pass event types they do not know through untouched.
const ResponseEventPrefix = "response.switchyard."
