package demobackend

import (
	"net/http"
	"strings"
	"testing"
)

func TestRequestValidation(t *testing.T) {
	const user = `{"role":"user","content":"hi"}`
	tests := []struct {
		name     string
		opts     Options
		method   string
		path     string
		auth     string // Authorization header; testKey bearer when empty
		body     string
		status   int
		wantCode string
		wantMsg  string // substring of the message
	}{
		{name: "bad JSON", body: `{"model":`, status: 400, wantCode: codeInvalidJSON},
		{name: "not an object", body: `[1,2]`, status: 400, wantCode: codeInvalidJSON},
		{name: "missing model", body: `{"messages":[` + user + `]}`, status: 400, wantCode: codeMissingParam, wantMsg: "model"},
		{name: "missing messages", body: `{"model":"m"}`, status: 400, wantCode: codeMissingParam, wantMsg: "'messages'"},
		{name: "null messages", body: `{"model":"m","messages":null}`, status: 400, wantCode: codeMissingParam},
		{name: "empty messages", body: `{"model":"m","messages":[]}`, status: 400, wantCode: codeEmptyArray},
		{name: "wrong type", body: `{"model":"m","messages":[` + user + `],"stream":"yes"}`, status: 400, wantCode: codeInvalidType, wantMsg: "stream"},
		{name: "bad role", body: `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, status: 400, wantCode: codeInvalidValue, wantMsg: "robot"},
		{name: "object content", body: `{"model":"m","messages":[{"role":"user","content":{"a":1}}]}`, status: 400, wantCode: codeInvalidType, wantMsg: "an object"},
		{name: "null user content", body: `{"model":"m","messages":[{"role":"user","content":null}]}`, status: 400, wantCode: codeInvalidType},
		{name: "part without payload", body: `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, status: 400, wantCode: codeMissingParam, wantMsg: "image_url"},
		{name: "stream_options without stream", body: `{"model":"m","messages":[` + user + `],"stream_options":{"include_usage":true}}`, status: 400, wantCode: codeInvalidValue, wantMsg: "stream_options"},
		{name: "tool result without call", body: `{"model":"m","messages":[` + user + `,{"role":"tool","tool_call_id":"c1","content":"r"}]}`, status: 400, wantCode: codeInvalidValue, wantMsg: "role 'tool'"},
		{
			name:     "tool call without result",
			body:     `{"model":"m","messages":[` + user + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"},` + user + `]}`,
			status:   400,
			wantCode: codeInvalidValue,
			wantMsg:  "did not have response messages: c2",
		},
		{name: "json_object without the word", body: `{"model":"m","messages":[` + user + `],"response_format":{"type":"json_object"}}`, status: 400, wantCode: codeInvalidValue, wantMsg: "json"},
		{name: "unknown response_format", body: `{"model":"m","messages":[` + user + `],"response_format":{"type":"xml"}}`, status: 400, wantCode: codeInvalidValue},
		{name: "bad tool name", body: `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"web search"}}]}`, status: 400, wantCode: codeInvalidToolName},
		{name: "zero max_tokens", body: `{"model":"m","messages":[` + user + `],"max_tokens":0}`, status: 400, wantCode: codeInvalidValue},
		{name: "unknown model", opts: Options{Models: []string{"only"}}, body: `{"model":"other","messages":[` + user + `]}`, status: 404, wantCode: codeModelNotFound, wantMsg: "`other`"},
		{name: "missing key", opts: Options{APIKey: testKey}, auth: "-", body: `{"model":"m","messages":[` + user + `]}`, status: 401, wantCode: "invalid_api_key", wantMsg: "didn't provide"},
		{name: "wrong key", opts: Options{APIKey: testKey}, auth: "Bearer sk-wrong-key-123456", body: `{"model":"m","messages":[` + user + `]}`, status: 401, wantCode: "invalid_api_key", wantMsg: "sk-***3456"},
		{name: "unknown URL", path: "/v1/embeddings", body: `{}`, status: 404, wantCode: "unknown_url"},
		{name: "wrong method", method: http.MethodGet, status: 405, wantCode: "method_not_allowed"},
		{name: "valid tool round trip", body: `{"model":"m","messages":[` + user + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, status: 200},
		{name: "valid content parts", body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, tt.opts)
			method := cmpOr(tt.method, http.MethodPost)
			path := cmpOr(tt.path, "/v1/chat/completions")
			req, err := http.NewRequest(method, strings.TrimSuffix(s.URL(), "/v1")+path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			switch tt.auth {
			case "":
				req.Header.Set("Authorization", "Bearer "+testKey)
			case "-":
			default:
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == 200 {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			_, code, msg := errorEnvelope(t, resp.Body)
			if code != tt.wantCode || !strings.Contains(msg, tt.wantMsg) {
				t.Fatalf("code %q message %q, want %q containing %q", code, msg, tt.wantCode, tt.wantMsg)
			}
			if n := len(s.Requests()); n != 1 {
				t.Fatalf("recorded %d requests, want the refused one too", n)
			}
			if tt.status == 400 && s.Requests()[0].Chat != nil {
				t.Fatal("an invalid body should not be decoded into Chat")
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
