package request

import (
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
)

func TestParseResponses(t *testing.T) {
	revB := Limits{Profile: policy.ProfileFor(policy.RevisionB), Strict: true}
	revA := Limits{Profile: policy.ProfileFor(policy.RevisionA), SystemBudgetChars: 10}
	img := jsonString(dataURL("image/png", pngBytes))
	two := revB
	two.MaxMessages = 1

	cases := []parseCase{
		{name: "a string input is one user message, with usage at the end of a stream",
			body: `{"model":"svc-3","input":"hi","stream":true,"max_output_tokens":64}`,
			check: func(t *testing.T, r *Request) {
				if !r.Responses || !r.IncludeUsage || !r.Stream || r.MaxTokens != 64 || len(r.Messages) != 1 ||
					r.Messages[0].Role != RoleUser || r.Messages[0].Text() != "hi" {
					t.Errorf("request %+v", r)
				}
			}},
		{name: "instructions come first, as a developer message",
			body: `{"model":"svc-3","instructions":"Be brief.","input":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if len(r.Messages) != 2 || r.Messages[0].Role != RoleDeveloper || r.Messages[0].Text() != "Be brief." {
					t.Errorf("messages %+v", r.Messages)
				}
			}},
		{name: "message items with and without type, parts of every kind",
			body: `{"model":"svc-3","input":[` +
				`{"type":"message","role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":` + img + `},` +
				`{"type":"input_image","file_id":"file-img"},{"type":"input_file","file_id":"file-doc"}]},` +
				`{"role":"assistant","content":[{"type":"output_text","text":"seen"}]},` +
				`{"role":"user","content":"and?"}]}`,
			check: func(t *testing.T, r *Request) {
				if len(r.Messages) != 3 {
					t.Fatalf("messages %+v", r.Messages)
				}
				p := r.Messages[0].Parts
				if len(p) != 4 || p[0].Kind != PartText || p[1].Kind != PartImage || p[1].Image == nil ||
					p[2].Kind != PartFile || p[2].FileID != "file-img" || p[3].Kind != PartFile || p[3].FileID != "file-doc" {
					t.Errorf("parts %+v", p)
				}
				if r.Messages[1].Role != RoleAssistant || r.Messages[1].Text() != "seen" {
					t.Errorf("assistant turn %+v", r.Messages[1])
				}
			}},
		{name: "the /v3 members are read as on the chat route",
			body:    `{"model":"svc-3","input":"hi","skip_search":true,"modalities":["text"],"extra_body":{"user_name":"Ann"}}`,
			headers: map[string]string{HeaderIncludeCost: "1"},
			check: func(t *testing.T, r *Request) {
				if !r.SkipSearch || r.Files || r.UserName != "Ann" || !r.IncludeCost {
					t.Errorf("request %+v", r)
				}
			}},
		{name: "no input", body: `{"model":"svc-3"}`, wantCode: CodeMissingParameter},
		{name: "no model", body: `{"input":"hi"}`, wantCode: CodeMissingParameter},
		{name: "empty input list", body: `{"model":"svc-3","input":[]}`, wantCode: CodeInvalidMessages},
		{name: "input of the wrong type", body: `{"model":"svc-3","input":5}`, wantCode: CodeInvalidType},
		{name: "previous_response_id", body: `{"model":"svc-3","input":"hi","previous_response_id":"resp_1"}`, wantCode: CodeUnsupportedParameter},
		{name: "conversation", body: `{"model":"svc-3","input":"hi","conversation":"conv_1"}`, wantCode: CodeUnsupportedParameter},
		{name: "background", body: `{"model":"svc-3","input":"hi","background":true}`, wantCode: CodeUnsupportedParameter},
		{name: "client tools", body: `{"model":"svc-3","input":"hi","tools":[{"type":"web_search"}]}`, wantCode: CodeUnsupportedParameter},
		{name: "a function call output", body: `{"model":"svc-3","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`, wantCode: CodeInvalidMessages},
		{name: "an unknown item type", body: `{"model":"svc-3","input":[{"type":"teleport"}]}`, wantCode: CodeInvalidMessages},
		{name: "a tool role", body: `{"model":"svc-3","input":[{"role":"tool","content":"x"}]}`, wantCode: CodeInvalidRole},
		{name: "an item without content", body: `{"model":"svc-3","input":[{"role":"user"}]}`, wantCode: CodeMissingParameter},
		{name: "an unknown part", body: `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, wantCode: CodeInvalidContent},
		{name: "a remote image", body: `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/a.png"}]}]}`, wantCode: CodeUnsupportedURLScheme},
		{name: "an image without a source", body: `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_image","detail":"auto"}]}]}`, wantCode: CodeMissingParameter},
		{name: "an image by url and file_id", body: `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_image","file_id":"f","image_url":` + img + `}]}]}`, wantCode: CodeInvalidContent},
		{name: "inline file data", body: `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_file","file_data":"eA=="}]}]}`, wantCode: CodeInvalidContent},
		{name: "an image in a system item", body: `{"model":"svc-3","input":[{"role":"system","content":[{"type":"input_image","file_id":"f"}]}]}`, wantCode: CodeInvalidContent},
		// The messages of the checks shared with the chat parser, word for word.
		{name: "two items over the limit", body: `{"model":"svc-3","input":["a","b"]}`, limits: &two,
			wantCode: CodeInvalidMessages, wantMessage: "input holds 2 items; at most 1 are accepted."},
		{name: "instructions past the item limit", body: `{"model":"svc-3","instructions":"x","input":[{"role":"user","content":"hi"}]}`, limits: &two,
			wantCode: CodeInvalidMessages, wantMessage: "input holds 2 items; at most 1 are accepted."},
		{name: "the empty list's message", body: `{"model":"svc-3","input":[]}`,
			wantCode: CodeInvalidMessages, wantMessage: "input must contain at least one item."},
		{name: "an unknown role's message", body: `{"model":"svc-3","input":[{"role":"pilot","content":"x"}]}`,
			wantCode: CodeInvalidRole, wantMessage: `input[0].role "pilot" is unknown; use system, developer, user or assistant.`},
		{name: "an item without a role", body: `{"model":"svc-3","input":[{"type":"message","content":"x"}]}`,
			wantCode: CodeMissingParameter, wantMessage: "input[0].role is required."},
		{name: "a role that is no string", body: `{"model":"svc-3","input":[{"role":1,"content":"x"}]}`,
			wantCode: CodeInvalidType},
		{name: "content of the wrong type", body: `{"model":"svc-3","input":[{"role":"user","content":5}]}`,
			wantCode: CodeInvalidType},
		{name: "the system item's message", body: `{"model":"svc-3","input":[{"role":"developer","content":[{"type":"input_file","file_id":"f"}]}]}`,
			wantCode: CodeInvalidContent, wantMessage: "input[0]: system and developer messages may hold only text parts."},
		{name: "a refusal that is no string", body: `{"model":"svc-3","input":[{"role":"assistant","content":[{"type":"refusal","refusal":1}]}]}`,
			wantCode: CodeInvalidType},
		{name: "a bad image's message", body: `{"model":"svc-3","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/png;base64,!!"}]}]}`,
			wantCode: CodeInvalidImage, wantMessage: "input[0].content[1].image_url: the data URL holds invalid base64."},
		{name: "a key named twice", body: `{"model":"svc-3","input":"hi","Input":"ho"}`, wantCode: CodeInvalidJSON},
		{name: "revision A shortens long instructions",
			body: `{"model":"svc-3","instructions":"` + strings.Repeat("x", 40) + `","input":"hi"}`, limits: &revA,
			check: func(t *testing.T, r *Request) {
				if !r.SystemShortened {
					t.Error("instructions past the budget were not shortened")
				}
			}},
	}
	runParseCases(t, ParseResponses, revB, cases)
}
