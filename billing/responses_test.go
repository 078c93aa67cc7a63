package billing

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

func TestParseResponses(t *testing.T) {
	body := `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_text","text":"What is Go?"}]}],` +
		`"instructions":"Be brief.","stream":true,"max_output_tokens":300}`
	req, err := ParseResponses([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if req.Model != "svc-3" || !req.Stream || req.MaxTokens != 300 || !req.Responses || req.DropUsage {
		t.Fatalf("parsed %+v", req)
	}
	// A Responses stream reports its usage unasked: the body goes on as sent.
	if string(req.Body) != body {
		t.Fatalf("body changed:\n%s", req.Body)
	}
	if got := string(req.Prompt); got != "Be brief.\nWhat is Go?\n" {
		t.Fatalf("prompt text %q", got)
	}
	if ask := AskV1(req); ask.Meter != V1Responses || ask.MaxTokens != 300 || !ask.Stream {
		t.Fatalf("ask %+v", ask)
	}
}

func TestParseResponsesPromptOfItems(t *testing.T) {
	body := `{"model":"m","input":[` +
		`{"type":"message","role":"user","content":"plain text"},` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"x\"}","status":"completed"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"42"},` +
		`{"type":"message","role":"user","content":[{"type":"input_image","image_url":"https://example.com/a.png","detail":"low"}]}],` +
		`"tools":[{"type":"function","name":"lookup","parameters":{}}]}`
	req, err := ParseResponses([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	got := string(req.Prompt)
	for _, want := range []string{"plain text\n", "lookup\n", `{"q":"x"}` + "\n", "42\n", "https://example.com/a.png\n",
		`[{"type":"function","name":"lookup","parameters":{}}]`} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt text lacks %q:\n%s", want, got)
		}
	}
	for _, skipped := range []string{"message", "user", "fc_1", "call_1", "completed", "function_call", "low"} {
		if strings.Contains(got, skipped+"\n") {
			t.Errorf("prompt text counts the identifier or enumeration %q:\n%s", skipped, got)
		}
	}
	if req.PromptEstimate() >= EstimatePromptTokens(req.Body) {
		t.Errorf("the prompt estimate %d is not below the body's %d", req.PromptEstimate(), EstimatePromptTokens(req.Body))
	}
	// A string input is the prompt itself.
	req, err = ParseResponses([]byte(`{"model":"m","input":"Hello there"}`))
	if err != nil || string(req.Prompt) != "Hello there\n" {
		t.Fatalf("%q %v", req.Prompt, err)
	}
}

func TestParseResponsesRefuses(t *testing.T) {
	for _, tt := range []struct{ name, body, code string }{
		{"not JSON", `{"model":`, "invalid_json"},
		{"a key twice", `{"model":"a","Model":"b","input":"x"}`, "invalid_json"},
		{"a stream that is no boolean", `{"model":"m","input":"x","stream":"yes"}`, "invalid_parameter"},
		{"a negative max_output_tokens", `{"model":"m","input":"x","max_output_tokens":-1}`, "invalid_parameter"},
		{"a stored response", `{"model":"m","input":"x","previous_response_id":"resp_1"}`, "unsupported_parameter"},
		{"a stored response, another case", `{"model":"m","input":"x","Previous_Response_Id":"resp_1"}`, "unsupported_parameter"},
		{"a conversation", `{"model":"m","input":"x","conversation":"conv_1"}`, "unsupported_parameter"},
		{"a saved prompt", `{"model":"m","prompt":{"id":"pmpt_1"}}`, "unsupported_parameter"},
		{"the background", `{"model":"m","input":"x","background":true}`, "unsupported_parameter"},
		{"an item reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "unsupported_parameter"},
		{"a hosted tool", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"},{"type":"web_search"}]}`, "unsupported_parameter"},
		{"a vector store", `{"model":"m","input":"x","tools":[{"type":"file_search","vector_store_ids":["vs_1"]}]}`, "unsupported_parameter"},
		{"a tool without a type", `{"model":"m","input":"x","tools":[{"name":"f"}]}`, "unsupported_parameter"},
		{"a tool type in capitals", `{"model":"m","input":"x","tools":[{"type":"FUNCTION","name":"f"}]}`, "unsupported_parameter"},
		{"an item reference in capitals", `{"model":"m","input":[{"Type":"ITEM_REFERENCE","id":"msg_1"}]}`, "unsupported_parameter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseResponses([]byte(tt.body))
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != tt.code {
				t.Fatalf("err = %v, want 400 %s", err, tt.code)
			}
		})
	}
	for _, ok := range []string{
		`{"model":"m","input":"x","previous_response_id":null,"background":false,"store":false}`,
		`{"model":"m","input":"x","max_output_tokens":null}`,
		`{"model":"m","input":"x","tools":[{"type":"function","name":"f","parameters":{}},{"type":"custom","name":"g"}]}`,
		`{"model":"m","input":"x","tools":[]}`,
	} {
		if _, err := ParseResponses([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

const responsesStream = "event: response.created\n" +
	`data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[],"usage":null}}` + "\n\n" +
	"event: response.output_text.delta\n" +
	`data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello"}` + "\n\n" +
	"event: response.completed\n" +
	`data: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":40,"output_tokens":6,"total_tokens":46}}}` + "\n\n"

func TestMeterResponsesStream(t *testing.T) {
	for _, n := range []int{1, 9, len(responsesStream)} {
		m := NewMeter(false)
		if out := feed(m, "text/event-stream", responsesStream, n); out != responsesStream {
			t.Fatalf("chunks of %d: stream changed:\n%s", n, out)
		}
		if u := m.Usage(); u != (Usage{Prompt: 40, Completion: 6}) {
			t.Fatalf("chunks of %d: usage %+v", n, u)
		}
	}
	// Without response.completed the answer streamed so far is estimated.
	cut := responsesStream[:strings.Index(responsesStream, "event: response.completed")]
	m := NewMeter(false)
	feed(m, "text/event-stream", cut, 16)
	if u := m.Usage(); !u.Estimated || u.Completion != 1 {
		t.Fatalf("usage of a cut stream %+v, want the estimate of one token", u)
	}
}

func flatPrice(u Usage) int64 { return u.Prompt + 10*u.Completion }

func TestMeterShowsCostInResponsesStream(t *testing.T) {
	want := strings.Replace(responsesStream, `"total_tokens":46}`, `"total_tokens":46,"cost_cents":100}`, 1)
	for _, n := range []int{1, 9, len(responsesStream)} {
		m := NewMeter(false)
		m.ShowCost(flatPrice)
		if out := feed(m, "text/event-stream", responsesStream, n); out != want {
			t.Fatalf("chunks of %d:\n%s\nwant\n%s", n, out, want)
		}
	}
}

func TestMeterShowsCostInChatStream(t *testing.T) {
	want := strings.Replace(usageStream, `"total_tokens":14}`, `"total_tokens":14,"cost_cents":32}`, 1)
	for _, n := range []int{1, 5, len(usageStream)} {
		m := NewMeter(false)
		m.ShowCost(flatPrice)
		if out := feed(m, "text/event-stream", usageStream, n); out != want {
			t.Fatalf("chunks of %d:\n%s\nwant\n%s", n, out, want)
		}
	}
	// CRLF line ends, an id line and data over two lines: the other lines
	// stay, the data becomes one line.
	stream := "id: 7\r\ndata: {\"choices\":[],\r\ndata: \"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"cost_cents\":999}}\r\n\r\ndata: [DONE]\r\n\r\n"
	m := NewMeter(false)
	m.ShowCost(flatPrice)
	out := feed(m, "text/event-stream", stream, 3)
	wantOut := "id: 7\r\ndata: {\"choices\":[], \"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"cost_cents\":11}}\r\n\r\ndata: [DONE]\r\n\r\n"
	if out != wantOut {
		t.Fatalf("got\n%q\nwant\n%q", out, wantOut)
	}
}

func TestMeterShowsCostInJSON(t *testing.T) {
	body := `{"id":"resp_1","object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"usage"}]}],` +
		`"usage":{"input_tokens":40,"output_tokens":6,"total_tokens":46}}`
	m := NewMeter(false)
	m.ShowCost(flatPrice)
	m.Start("application/json")
	if out := m.Write([]byte(body[:20])); len(out) != 0 {
		t.Fatalf("a JSON answer went out before its usage was read: %q", out)
	}
	out := string(m.Write([]byte(body[20:]))) + string(m.Close())
	want := strings.Replace(body, `"total_tokens":46}`, `"total_tokens":46,"cost_cents":100}`, 1)
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	if !json.Valid([]byte(out)) {
		t.Fatal("not JSON")
	}

	// Without a usage object the answer goes out as it came.
	m = NewMeter(false)
	m.ShowCost(flatPrice)
	if out := feed(m, "application/json", `{"data":[]}`, 4); out != `{"data":[]}` {
		t.Fatalf("got %s", out)
	}

	// An answer past MaxMeteredJSON goes out unchanged once it outgrows
	// the bound, none of it lost.
	big := `{"pad":"` + strings.Repeat("x", MaxMeteredJSON) + `","usage":{"prompt_tokens":1,"completion_tokens":1}}`
	m = NewMeter(false)
	m.ShowCost(flatPrice)
	if out := feed(m, "application/json", big, 64<<10); out != big {
		t.Fatalf("a large answer changed: %d bytes of %d", len(out), len(big))
	}
	if u := m.Usage(); u != (Usage{Prompt: 1, Completion: 1}) {
		t.Fatalf("usage of a large answer %+v", u)
	}
}

func TestWithCost(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`{"usage":{}}`, `{"usage":{"cost_cents":5}}`},
		{`{ "usage" : { "a" : 1 } , "b":2}`, `{ "usage" : {"a":1,"cost_cents":5} , "b":2}`},
		{`{"usage":{"a":1},"usage":{"b":2}}`, `{"usage":{"a":1},"usage":{"b":2,"cost_cents":5}}`},
		{`{"x":"\"usage\":{}"}`, `{"x":"\"usage\":{}"}`},
		{`{"usage":null}`, `{"usage":null}`},
	} {
		got, _ := withCost([]byte(tt.doc), 5, "usage")
		if string(got) != tt.want {
			t.Errorf("withCost(%s) = %s, want %s", tt.doc, got, tt.want)
		}
	}
}

// FuzzMeterShowCost holds the cost rewrite to the meter without it: the
// same usage, the same answer when no usage was read, and the same output
// whatever the size of the pieces the answer arrives in.
func FuzzMeterShowCost(f *testing.F) {
	f.Add([]byte(responsesStream), uint16(7), true)
	f.Add([]byte(usageStream), uint16(3), true)
	f.Add([]byte("data: {\"choices\":[],\r\ndata: \"usage\":{\"prompt_tokens\":1}}\r\r"), uint16(2), true)
	f.Add([]byte(`{"usage":{"input_tokens":3},"usage":{"output_tokens":1}}`), uint16(5), false)
	f.Fuzz(func(t *testing.T, answer []byte, step uint16, stream bool) {
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		plain := NewMeter(false)
		want := feed(plain, ct, string(answer), len(answer)+1)
		whole, pieces := NewMeter(false), NewMeter(false)
		whole.ShowCost(flatPrice)
		pieces.ShowCost(flatPrice)
		got := feed(whole, ct, string(answer), len(answer)+1)
		if inPieces := feed(pieces, ct, string(answer), int(step%64)+1); inPieces != got {
			t.Fatalf("whole %q, in pieces %q", got, inPieces)
		}
		if whole.Usage() != plain.Usage() {
			t.Fatalf("usage %+v with the cost shown, %+v without", whole.Usage(), plain.Usage())
		}
		if plain.Usage().Estimated && got != want {
			t.Fatalf("no usage read, yet the answer changed: %q to %q", want, got)
		}
		if !stream && json.Valid(answer) && !json.Valid([]byte(got)) {
			t.Fatalf("a JSON answer became invalid: %q", got)
		}
	})
}
