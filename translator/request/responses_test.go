package request

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
)

func TestParseResponses(t *testing.T) {
	revB := Limits{Profile: policy.ProfileFor(policy.RevisionB), Strict: true}
	revA := Limits{Profile: policy.ProfileFor(policy.RevisionA), SystemBudgetChars: 10}
	img := jsonString(dataURL("image/png", pngBytes))

	cases := []struct {
		name     string
		body     string
		headers  map[string]string
		limits   *Limits // default revB
		wantCode string  // empty: valid
		check    func(t *testing.T, r *Request)
	}{
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
		{name: "a key named twice", body: `{"model":"svc-3","input":"hi","Input":"ho"}`, wantCode: CodeInvalidJSON},
		{name: "revision A shortens long instructions",
			body: `{"model":"svc-3","instructions":"` + strings.Repeat("x", 40) + `","input":"hi"}`, limits: &revA,
			check: func(t *testing.T, r *Request) {
				if !r.SystemShortened {
					t.Error("instructions past the budget were not shortened")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := revB
			if c.limits != nil {
				lim = *c.limits
			}
			h := http.Header{}
			for k, v := range c.headers {
				h.Set(k, v)
			}
			r, err := ParseResponses([]byte(c.body), h, lim)
			if c.wantCode == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				c.check(t, r)
				return
			}
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Code != c.wantCode || ae.Status != http.StatusBadRequest || r != nil {
				t.Fatalf("got %v, want %s", err, c.wantCode)
			}
		})
	}
}
