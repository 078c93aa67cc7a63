package demobackend

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

func userParams(model, text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
}

func TestClientListsModels(t *testing.T) {
	s := start(t, Options{Models: []string{"m-large", "m-small"}, APIKey: testKey})
	client := newClient(s)
	page, err := client.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "m-large,m-small" {
		t.Fatalf("models = %v", ids)
	}
	m, err := client.Models.Get(context.Background(), "m-small")
	if err != nil || m.ID != "m-small" || m.OwnedBy != "switchyard" {
		t.Fatalf("get model = %+v, %v", m, err)
	}
}

func TestClientJSONAnswer(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	s.Enqueue(textReply("Hello, world!"))
	client := newClient(s)
	resp, err := client.Chat.Completions.New(context.Background(), userParams("any-model", "Say hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "Hello, world!" {
		t.Fatalf("content = %q", got)
	}
	if resp.Object != "chat.completion" || resp.Model != "any-model" || resp.Choices[0].FinishReason != "stop" {
		t.Fatalf("unexpected envelope: %s", resp.RawJSON())
	}
	// "Hello", ",", " world", "!"
	if resp.Usage.CompletionTokens != 4 {
		t.Fatalf("completion_tokens = %d, want 4", resp.Usage.CompletionTokens)
	}
	wantPrompt := tokensPerReply + tokensPerMessage + CountTokens("Say hi")
	if resp.Usage.PromptTokens != int64(wantPrompt) || resp.Usage.TotalTokens != int64(wantPrompt+4) {
		t.Fatalf("usage = %+v, want prompt %d", resp.Usage, wantPrompt)
	}
}

// streamAll runs a streaming request through the official accumulator and
// returns it together with the raw chunks.
func streamAll(t *testing.T, s *testServer, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, []openai.ChatCompletionChunk) {
	t.Helper()
	client := newClient(s)
	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var chunks []openai.ChatCompletionChunk
	for stream.Next() {
		c := stream.Current()
		if !acc.AddChunk(c) {
			t.Fatalf("accumulator refused chunk %s", c.RawJSON())
		}
		chunks = append(chunks, c)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return acc, chunks
}

func TestClientStreamsText(t *testing.T) {
	tests := []struct {
		name         string
		includeUsage bool
	}{
		{name: "without usage", includeUsage: false},
		{name: "with include_usage", includeUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, Options{APIKey: testKey})
			const text = "The quick brown fox jumps over the lazy dog."
			s.Enqueue(textReply(text))
			params := userParams(DefaultModel, "go")
			if tt.includeUsage {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			acc, chunks := streamAll(t, s, params)

			if got := acc.Choices[0].Message.Content; got != text {
				t.Fatalf("accumulated content = %q", got)
			}
			if acc.Choices[0].FinishReason != "stop" {
				t.Fatalf("finish_reason = %q", acc.Choices[0].FinishReason)
			}
			if chunks[0].Choices[0].Delta.Role != "assistant" {
				t.Fatalf("first chunk is not the role chunk: %s", chunks[0].RawJSON())
			}
			contentChunks := 0
			for _, c := range chunks {
				if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
					contentChunks++
				}
			}
			if want := CountTokens(text); contentChunks != want {
				t.Fatalf("content in %d chunks, want one per token (%d)", contentChunks, want)
			}

			last := chunks[len(chunks)-1]
			if tt.includeUsage {
				if len(last.Choices) != 0 || last.Usage.CompletionTokens != int64(CountTokens(text)) {
					t.Fatalf("last chunk should carry usage and no choices: %s", last.RawJSON())
				}
				if acc.Usage.TotalTokens == 0 {
					t.Fatal("accumulator saw no usage")
				}
				if !strings.Contains(chunks[0].RawJSON(), `"usage":null`) {
					t.Fatalf("non-final chunks should carry usage null: %s", chunks[0].RawJSON())
				}
			} else {
				for _, c := range chunks {
					if c.JSON.Usage.Valid() {
						t.Fatalf("usage sent without include_usage: %s", c.RawJSON())
					}
				}
				if last.Choices[0].FinishReason != "stop" {
					t.Fatalf("last chunk should be the finish chunk: %s", last.RawJSON())
				}
			}
		})
	}
}

func TestClientStreamsToolCalls(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	calls := []ToolCall{
		{ID: "call_a", Name: "web_search", Arguments: `{"query":"weather in Paris today"}`},
		{Name: "remember", Arguments: `{"fact":"likes tea"}`},
	}
	s.Enqueue(Reply{Content: "Let me check.", ToolCalls: calls})
	params := userParams(DefaultModel, "weather?")
	params.Tools = []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       "web_search",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}},
		}),
	}
	acc, chunks := streamAll(t, s, params)

	msg := acc.Choices[0].Message
	if msg.Content != "Let me check." || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("content %q finish %q", msg.Content, acc.Choices[0].FinishReason)
	}
	if len(msg.ToolCalls) != 2 {
		t.Fatalf("got %d tool calls", len(msg.ToolCalls))
	}
	for i, want := range calls {
		got := msg.ToolCalls[i]
		if got.Function.Name != want.Name || got.Function.Arguments != want.Arguments {
			t.Fatalf("call %d = %+v, want %+v", i, got.Function, want)
		}
		if !json.Valid([]byte(got.Function.Arguments)) {
			t.Fatalf("call %d arguments not JSON: %q", i, got.Function.Arguments)
		}
	}
	if msg.ToolCalls[0].ID != "call_a" || msg.ToolCalls[1].ID == "" {
		t.Fatalf("ids = %q, %q", msg.ToolCalls[0].ID, msg.ToolCalls[1].ID)
	}

	// Wire shape: id and name only in the first delta of each call,
	// arguments spread over several deltas.
	argDeltas := map[int64]int{}
	heads := map[int64]int{}
	for _, c := range chunks {
		if len(c.Choices) == 0 {
			continue
		}
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			if tc.ID != "" || tc.Function.Name != "" {
				heads[tc.Index]++
				if tc.ID == "" || tc.Function.Name == "" || tc.Function.Arguments != "" {
					t.Fatalf("first delta of call %d should carry id and name only: %s", tc.Index, c.RawJSON())
				}
				continue
			}
			argDeltas[tc.Index]++
		}
	}
	for i := range calls {
		if heads[int64(i)] != 1 || argDeltas[int64(i)] < 3 {
			t.Fatalf("call %d: %d head deltas, %d argument deltas", i, heads[int64(i)], argDeltas[int64(i)])
		}
	}

	offered := s.ChatRequests()[0]
	if !offered.HasTool("web_search") {
		t.Fatal("recorded request lost the offered tool")
	}
}

func TestClientJSONToolCallsAndContentNull(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	s.Enqueue(toolCalls(ToolCall{Name: "open_url", Arguments: `{"url":"https://example.com"}`}))
	client := newClient(s)
	resp, err := client.Chat.Completions.New(context.Background(), userParams(DefaultModel, "open it"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.RawJSON(), `"content":null`) {
		t.Fatalf("content should be null when only tool calls: %s", resp.RawJSON())
	}
	tc := resp.Choices[0].Message.ToolCalls
	if len(tc) != 1 || tc[0].Function.Name != "open_url" || resp.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("tool calls = %+v", tc)
	}
}

func TestClientReasoningBeforeContent(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	s.Enqueue(Reply{Reasoning: "Think first, then answer.", Content: "Answer."})
	params := userParams(DefaultModel, "q")
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	_, chunks := streamAll(t, s, params)

	var reasoning strings.Builder
	sawContent := false
	for _, c := range chunks {
		if len(c.Choices) == 0 {
			if got := c.Usage.CompletionTokensDetails.ReasoningTokens; got != int64(CountTokens("Think first, then answer.")) {
				t.Fatalf("reasoning_tokens = %d", got)
			}
			continue
		}
		d := c.Choices[0].Delta
		if f, ok := d.JSON.ExtraFields["reasoning_content"]; ok {
			if sawContent {
				t.Fatal("reasoning_content after content")
			}
			var piece string
			if err := json.Unmarshal([]byte(f.Raw()), &piece); err != nil {
				t.Fatal(err)
			}
			reasoning.WriteString(piece)
		}
		if d.Content != "" {
			sawContent = true
		}
	}
	if reasoning.String() != "Think first, then answer." || !sawContent {
		t.Fatalf("reasoning %q, content seen %v", reasoning.String(), sawContent)
	}
}

func TestClientJSONMode(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	params := userParams(DefaultModel, "Reply in JSON please")
	params.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	client := newClient(s)
	resp, err := client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &obj); err != nil {
		t.Fatalf("JSON mode answer is not a JSON object: %q", resp.Choices[0].Message.Content)
	}
	if obj["digest"] == "" || obj["reply"] != "demo" {
		t.Fatalf("JSON mode answer = %v", obj)
	}
}

func TestClientSeesScriptedErrors(t *testing.T) {
	tests := []struct {
		name     string
		reply    Reply
		status   int
		wantCode string
	}{
		{name: "rate limited", reply: errorReply(429, ""), status: 429, wantCode: "rate_limit_exceeded"},
		{name: "server error", reply: errorReply(500, ""), status: 500, wantCode: "server_error"},
		{name: "custom envelope", reply: errorReply(400, `{"error":{"message":"context too long","type":"invalid_request_error","code":"context_length_exceeded"}}`), status: 400, wantCode: "context_length_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, Options{APIKey: testKey})
			s.Enqueue(tt.reply)
			client := newClient(s)
			_, err := client.Chat.Completions.New(context.Background(), userParams(DefaultModel, "x"))
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *openai.Error", err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Code != tt.wantCode {
				t.Fatalf("status %d code %q, want %d %q", apiErr.StatusCode, apiErr.Code, tt.status, tt.wantCode)
			}
		})
	}
}

func TestClientStreamBrokenMidway(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	s.Enqueue(Reply{Content: "one two three four five six", BreakAfter: 3})
	client := newClient(s)
	stream := client.Chat.Completions.NewStreaming(context.Background(), userParams(DefaultModel, "x"))
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	n := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		n++
	}
	if stream.Err() == nil {
		t.Fatal("a dropped connection should surface as a stream error")
	}
	if n != 3 || acc.Choices[0].Message.Content != "one two" {
		t.Fatalf("got %d chunks, content %q; want 3 chunks (role, 2 tokens)", n, acc.Choices[0].Message.Content)
	}
}
