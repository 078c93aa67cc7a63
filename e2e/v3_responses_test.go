package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// v3ResponsesInput asks the assistant text through the Responses API.
func v3ResponsesInput(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: "svc-3",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(text)},
	}
}

// TestV3Responses runs openai-go's Responses client against /v3/responses
// of the real binary: text, streams, artifacts, usage and cost, errors.
func TestV3Responses(t *testing.T) {
	up, e, key, g := fundedGateway(t, "v3resp")
	client := openaiClient(g, key, "/v3")
	ctx := context.Background()

	t.Run("a text answer is one message item, with usage, charged", func(t *testing.T) {
		before := len(charges(t, e, "v3resp"))
		up.Enqueue(testupstream.Text("Rivers run to the sea."))
		params := v3ResponsesInput("Tell me about rivers.")
		params.Instructions = openai.String("Answer in one sentence.")
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if resp.OutputText() != "Rivers run to the sea." || resp.Status != responses.ResponseStatusCompleted ||
			!strings.HasPrefix(resp.ID, "resp_") || len(resp.Output) != 1 || resp.Output[0].Type != "message" {
			t.Fatalf("response %s", resp.RawJSON())
		}
		if resp.Usage.InputTokens <= 5 || resp.Usage.OutputTokens <= 0 ||
			resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
			t.Fatalf("usage %s", resp.Usage.RawJSON())
		}
		if _, ok := resp.Usage.JSON.ExtraFields["cost_cents"]; ok {
			t.Fatal("cost_cents without X-Include-Cost")
		}
		// The backend got the instructions and the input as chat messages.
		reqs := up.ChatRequests()
		last, _ := json.Marshal(reqs[len(reqs)-1].Messages)
		if !strings.Contains(string(last), "Answer in one sentence.") || !strings.Contains(string(last), "Tell me about rivers.") {
			t.Fatalf("upstream messages %s", last)
		}
		if n := len(charges(t, e, "v3resp")); n != before+1 {
			t.Fatalf("%d charges, want %d", n, before+1)
		}
	})

	t.Run("a stream is Responses events, the /v3 keys as events of their own", func(t *testing.T) {
		up.Enqueue(
			testupstream.ToolCalls(demobackend.ToolCall{Name: "create_chart", Arguments: chartCall}),
			testupstream.Text("Here is the chart."),
		)
		stream := client.Responses.NewStreaming(ctx, v3ResponsesInput("Chart the revenue."), option.WithHeader("X-Include-Cost", "1"))
		var types []string
		var text strings.Builder
		var artifact map[string]any
		var completed responses.Response
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			switch ev.Type {
			case "response.output_text.delta":
				text.WriteString(ev.Delta)
			case "response.switchyard.artifact":
				var raw struct {
					Artifact map[string]any `json:"artifact"`
				}
				if err := json.Unmarshal([]byte(ev.RawJSON()), &raw); err != nil {
					t.Fatal(err)
				}
				artifact = raw.Artifact
			case "response.completed":
				completed = ev.AsResponseCompleted().Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		if len(types) < 2 || types[0] != "response.created" || types[len(types)-1] != "response.completed" {
			t.Fatalf("event types %v", types)
		}
		if !containsAll(types, "response.output_item.added", "response.content_part.added", "response.output_text.done",
			"response.output_item.done", "response.switchyard.act") {
			t.Fatalf("event types %v", types)
		}
		if text.String() != "Here is the chart." || completed.OutputText() != "Here is the chart." {
			t.Fatalf("text %q, completed %s", text.String(), completed.RawJSON())
		}
		if artifact == nil || artifact["type"] != "chart" || artifact["object_id"] != "obj1" || artifact["file_id"] == nil {
			t.Fatalf("artifact %v (events %v)", artifact, types)
		}
		if completed.Usage.InputTokens <= 0 || completed.Usage.OutputTokens <= 0 {
			t.Fatalf("usage %s", completed.Usage.RawJSON())
		}
		cost, ok := completed.Usage.JSON.ExtraFields["cost_cents"]
		if !ok || cost.Raw() == "" || cost.Raw() == "null" {
			t.Fatalf("no cost_cents with X-Include-Cost: %s", completed.Usage.RawJSON())
		}
	})

	t.Run("a JSON answer carries the artifacts beside output", func(t *testing.T) {
		up.Enqueue(
			testupstream.ToolCalls(demobackend.ToolCall{Name: "create_chart", Arguments: chartCall}),
			testupstream.Text("Done."),
		)
		resp, err := client.Responses.New(ctx, v3ResponsesInput("Chart the revenue."))
		if err != nil {
			t.Fatal(err)
		}
		var extras struct {
			Artifacts []map[string]any `json:"artifacts"`
		}
		if err := json.Unmarshal([]byte(resp.RawJSON()), &extras); err != nil {
			t.Fatal(err)
		}
		if resp.OutputText() != "Done." || len(extras.Artifacts) != 1 || extras.Artifacts[0]["type"] != "chart" ||
			extras.Artifacts[0]["file_id"] == nil || extras.Artifacts[0]["image_base64"] != nil {
			t.Fatalf("response %s", resp.RawJSON())
		}
	})

	t.Run("input items: text parts, earlier turns, an uploaded file", func(t *testing.T) {
		status, _, body := g.do("POST", "/v3/files", key, multipartBody("B", "notes.md", "# Plan\nShip on Friday."),
			"Content-Type", "multipart/form-data; boundary=B")
		if status != 200 {
			t.Fatalf("upload: %d %s", status, body)
		}
		var f struct{ ID string }
		_ = json.Unmarshal([]byte(body), &f)
		up.Enqueue(testupstream.Text("Yes."))
		resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model: "svc-3",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage("Is water wet?", responses.EasyInputMessageRoleUser),
				responses.ResponseInputItemParamOfMessage("It is.", responses.EasyInputMessageRoleAssistant),
				responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
					responses.ResponseInputContentParamOfInputText("Sure?"),
					{OfInputFile: &responses.ResponseInputFileParam{FileID: openai.String(f.ID)}},
				}, responses.EasyInputMessageRoleUser),
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.OutputText() != "Yes." {
			t.Fatalf("response %s", resp.RawJSON())
		}
		reqs := up.ChatRequests()
		last, _ := json.Marshal(reqs[len(reqs)-1].Messages)
		for _, want := range []string{"Is water wet?", "It is.", "Sure?", "Ship on Friday."} {
			if !strings.Contains(string(last), want) {
				t.Fatalf("upstream messages lack %q: %s", want, last)
			}
		}
	})

	t.Run("refusals come in the API's envelope and codes", func(t *testing.T) {
		cases := []struct {
			name, body string
			status     int
			code       string
		}{
			{"no input", `{"model":"svc-3"}`, 400, "missing_parameter"},
			{"stored responses", `{"model":"svc-3","input":"hi","previous_response_id":"resp_1"}`, 400, "unsupported_parameter"},
			{"client tools", `{"model":"svc-3","input":"hi","tools":[{"type":"function","name":"f"}]}`, 400, "unsupported_parameter"},
			{"a tool loop item", `{"model":"svc-3","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`, 400, "invalid_messages"},
			{"a remote image", `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://example.com/a.png"}]}]}`, 400, "unsupported_url_scheme"},
			{"an unknown file", `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-nope"}]}]}`, 404, ""},
			{"bad JSON", `{"model":`, 400, "invalid_json"},
		}
		for _, c := range cases {
			status, _, body := g.do("POST", "/v3/responses", key, c.body, "Content-Type", "application/json")
			var env struct {
				Error struct{ Code, Message, Type string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil || env.Error.Message == "" {
				t.Errorf("%s: %d %s", c.name, status, body)
				continue
			}
			if status != c.status || (c.code != "" && env.Error.Code != c.code) {
				t.Errorf("%s: %d %s, want %d %s", c.name, status, body, c.status, c.code)
			}
		}
		// The admission step meters the route as the chat: a JSON body only.
		status, _, body := g.do("POST", "/v3/responses", key, `input=hi`, "Content-Type", "application/x-www-form-urlencoded")
		if status != http.StatusUnsupportedMediaType || !strings.Contains(body, `"code":"unsupported_media_type"`) {
			t.Errorf("a form body: %d %s", status, body)
		}
		// openai-go reads the envelope as an *openai.Error.
		_, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "svc-3"})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "missing_parameter" {
			t.Fatalf("error %v", err)
		}
		bad := openaiClient(g, "sk-wrong", "/v3")
		_, err = bad.Responses.New(ctx, v3ResponsesInput("hi"))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
			t.Fatalf("error without a valid key %v", err)
		}
	})

	t.Run("a backend failure mid-stream ends in an error event the SDK raises", func(t *testing.T) {
		up.Enqueue(demobackend.Reply{Content: "one two three four five six", BreakAfter: 3,
			BreakError: apierror.New(500, apierror.TypeServer, "server_error", "engine died")})
		stream := client.Responses.NewStreaming(ctx, v3ResponsesInput("Count."))
		var types []string
		for stream.Next() {
			types = append(types, stream.Current().Type)
		}
		err := stream.Err()
		if err == nil || !strings.Contains(err.Error(), "stream_interrupted") {
			t.Fatalf("stream error %v after %v", err, types)
		}
		if !containsAll(types, "response.created", "response.output_text.delta") || containsAll(types, "response.completed") {
			t.Fatalf("event types %v", types)
		}
	})
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, s := range list {
			if s == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestResponsesRecipe runs the openai-go Responses recipe of
// docs/clients.md (e2e/clients/goresponses) as printed there against the
// real binary: a chart through /v3/responses, its events, the cost and
// the download.
func TestResponsesRecipe(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(repoRoot, "e2e", "clients", "goresponses", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, src) {
		t.Fatal("docs/clients.md does not show e2e/clients/goresponses/main.go as it is")
	}
	_, _, key, g := fundedGateway(t, "resprecipe")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(goBin, "run", "./e2e/clients/goresponses")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "SWITCHYARD_BASE_URL="+g.base, "SWITCHYARD_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^act: \{"type":"response.switchyard.act","sequence_number":\d+,"act":\{"id":1,"op":"start"`),
		regexp.MustCompile(`(?m)^artifact: .*"type":"chart"`),
		regexp.MustCompile(`(?m)^text: \S`),
		regexp.MustCompile(`(?m)^usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`),
		regexp.MustCompile(`(?m)^downloaded file-[A-Za-z0-9]+: [1-9][0-9]* bytes of image/png`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output lacks %s:\n%s", want, got)
		}
	}
}
