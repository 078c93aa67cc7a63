package demobackend

import "encoding/json"

// Wire shapes of OpenAI's Chat Completions answers. Fields that OpenAI
// sends as null are pointers without omitempty, so that they are sent as
// null too: some clients tell "absent" from "null".

type completionJSON struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"` // "chat.completion"
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []choiceJSON    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

type choiceJSON struct {
	Index        int         `json:"index"`
	Message      messageJSON `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type messageJSON struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"` // null when the answer is only tool calls
	Refusal          *string        `json:"refusal"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
}

type toolCallJSON struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionJSON `json:"function"`
}

type functionJSON struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type usageJSON struct {
	PromptTokens            int                `json:"prompt_tokens"`
	CompletionTokens        int                `json:"completion_tokens"`
	TotalTokens             int                `json:"total_tokens"`
	CompletionTokensDetails *completionDetails `json:"completion_tokens_details,omitempty"`
}

type completionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func (u Usage) wire() usageJSON {
	w := usageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.ReasoningTokens > 0 {
		w.CompletionTokensDetails = &completionDetails{ReasoningTokens: u.ReasoningTokens}
	}
	return w
}

type chunkJSON struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"` // "chat.completion.chunk"
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []chunkChoiceJSON `json:"choices"` // [] in the usage chunk, never null
	// Usage is absent without include_usage, null on every chunk but the
	// last with it, as OpenAI streams.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type chunkChoiceJSON struct {
	Index        int       `json:"index"`
	Delta        deltaJSON `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type deltaJSON struct {
	Role             string              `json:"role,omitempty"`
	Content          *string             `json:"content,omitempty"`
	ReasoningContent string              `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallDeltaJSON `json:"tool_calls,omitempty"`
}

type toolCallDeltaJSON struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function functionDeltaJSON `json:"function"`
}

type functionDeltaJSON struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}
