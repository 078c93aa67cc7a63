package demobackend

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

func responsesParams(model, text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        model,
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(text)},
	}
}

func TestClientResponsesJSON(t *testing.T) {
	s := start(t, Options{APIKey: testKey})
	s.Enqueue(textReply("Hello, world!"))
	client := newClient(s)
	resp, err := client.Responses.New(context.Background(), responsesParams("any-model", "Say hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "Hello, world!" || resp.Status != "completed" || resp.Model != "any-model" {
		t.Fatalf("response %s", resp.RawJSON())
	}
	wantPrompt := tokensPerReply + 2*tokensPerMessage + CountTokens("Be brief.") + CountTokens("Say hi")
	if resp.Usage.OutputTokens != 4 || resp.Usage.InputTokens != int64(wantPrompt) || resp.Usage.TotalTokens != int64(wantPrompt+4) {
		t.Fatalf("usage %s, want %d input tokens", resp.Usage.RawJSON(), wantPrompt)
	}
}

func TestClientResponsesStream(t *testing.T) {
	served := make(chan Served, 1)
	s := start(t, Options{APIKey: testKey, Served: func(sv Served) { served <- sv }})
	s.Enqueue(Reply{Content: "Hello, world!", ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{"q":"go"}`}}})
	client := newClient(s)
	stream := client.Responses.NewStreaming(context.Background(), responsesParams("any-model", "Say hi"))
	var text string
	var completed *responses.Response
	var calls []string
	for stream.Next() {
		switch ev := stream.Current().AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text += ev.Delta
		case responses.ResponseOutputItemDoneEvent:
			if ev.Item.Type == "function_call" {
				calls = append(calls, ev.Item.Name+ev.Item.Arguments.OfString)
			}
		case responses.ResponseCompletedEvent:
			completed = &ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text != "Hello, world!" || len(calls) != 1 || calls[0] != `lookup{"q":"go"}` {
		t.Fatalf("text %q, calls %q", text, calls)
	}
	if completed == nil || completed.OutputText() != "Hello, world!" || completed.Usage.OutputTokens == 0 {
		t.Fatalf("response.completed: %+v", completed)
	}
	// The answer is served with its usage reported, as a Responses
	// stream always reports it.
	sv := <-served
	if !sv.Reported || !sv.Complete || int64(sv.Usage.CompletionTokens) != completed.Usage.OutputTokens {
		t.Fatalf("served %+v", sv)
	}
}

func TestResponsesRequestIsAChatRequest(t *testing.T) {
	req, err := decodeResponsesRequest([]byte(`{"model":"m","instructions":"sys","max_output_tokens":7,"input":[` +
		`{"role":"user","content":[{"type":"input_text","text":"hi"}]},` +
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c1","output":"42"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.maxCompletionTokens() != 7 || len(req.Messages) != 4 || req.Messages[0].Role != "system" ||
		req.LastUserText() != "hi" || req.Messages[2].ToolCalls[0].Function.Name != "f" || req.Messages[3].Text() != "42" {
		t.Fatalf("%+v", req)
	}
	if _, err := decodeResponsesRequest([]byte(`{"model":"m"}`)); err == nil {
		t.Fatal("a request without input was accepted")
	}
}
