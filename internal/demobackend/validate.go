package demobackend

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// The error codes OpenAI uses for malformed chat requests. OpenAI leaves
// code null for some of these; a named code is easier to assert on.
const (
	codeInvalidJSON     = "invalid_json"
	codeMissingParam    = "missing_required_parameter"
	codeInvalidType     = "invalid_type"
	codeInvalidValue    = "invalid_value"
	codeEmptyArray      = "empty_array"
	codeModelNotFound   = "model_not_found"
	codeInvalidToolName = "invalid_function_name"
)

var (
	validRoles         = []string{"system", "assistant", "user", "function", "tool", "developer"}
	functionNameSyntax = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// decodeChatRequest parses and validates body with OpenAI's rules and
// messages, for the rules a gateway is likely to break: required fields,
// roles, content types, tool-call pairing, tool names, JSON mode. Unknown
// fields are accepted, as vLLM and Ollama accept them.
func decodeChatRequest(body []byte) (*ChatRequest, *apierror.Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, apierror.InvalidRequest(codeInvalidJSON,
			"We could not parse the JSON body of your request. The API expects a JSON object payload.")
	}
	var req ChatRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, apierror.InvalidRequest(codeInvalidType,
				fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", te.Field, te.Type, te.Value))
		}
		return nil, apierror.InvalidRequest(codeInvalidJSON, "We could not parse the JSON body of your request.")
	}
	req.rawFields = fields
	if e := validate(&req); e != nil {
		return nil, e
	}
	return &req, nil
}

func validate(req *ChatRequest) *apierror.Error {
	if req.Model == "" {
		return apierror.InvalidRequest(codeMissingParam, "you must provide a model parameter")
	}
	if !req.Has("messages") || isNull(req.rawFields["messages"]) {
		return apierror.InvalidRequest(codeMissingParam, "Missing required parameter: 'messages'.")
	}
	if len(req.Messages) == 0 {
		return apierror.InvalidRequest(codeEmptyArray,
			"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	if req.StreamOptions != nil && !req.Stream {
		return apierror.InvalidRequest(codeInvalidValue,
			"The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if e := validateMessages(req.Messages); e != nil {
		return e
	}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return apierror.InvalidRequest(codeInvalidValue,
				fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function'. (tools[%d].type)", t.Type, i))
		}
		if !functionNameSyntax.MatchString(t.Function.Name) {
			return apierror.InvalidRequest(codeInvalidToolName,
				fmt.Sprintf("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", i))
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "json_schema":
		case "json_object":
			if !mentionsJSON(req.Messages) {
				return apierror.InvalidRequest(codeInvalidValue,
					"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
			}
		default:
			return apierror.InvalidRequest(codeInvalidValue,
				fmt.Sprintf("Invalid value: '%s'. Supported values are: 'text', 'json_object', and 'json_schema'. (response_format.type)", rf.Type))
		}
	}
	if n := req.maxCompletionTokens(); n < 0 || (n == 0 && (req.MaxTokens != nil || req.MaxCompletionTokens != nil)) {
		return apierror.InvalidRequest(codeInvalidValue,
			fmt.Sprintf("Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got %d instead.", n))
	}
	return nil
}

// validateMessages checks roles, content types and the pairing of tool
// calls with tool results, which OpenAI enforces and which an
// orchestrating gateway most easily gets wrong.
func validateMessages(msgs []Message) *apierror.Error {
	pending := map[string]bool{} // tool_call_ids still awaiting a tool message
	var order []string
	for i, m := range msgs {
		if !slices.Contains(validRoles, m.Role) {
			return apierror.InvalidRequest(codeInvalidValue,
				fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'. (messages[%d].role)", m.Role, i))
		}
		if e := validateContent(m, i); e != nil {
			return e
		}
		if m.Role != "tool" && len(pending) > 0 {
			return missingToolResults(order, pending)
		}
		switch m.Role {
		case "assistant":
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
				order = append(order, tc.ID)
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return apierror.InvalidRequest(codeInvalidValue,
					fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'. (messages[%d])", i))
			}
			delete(pending, m.ToolCallID)
			if len(pending) == 0 {
				order = order[:0]
			}
		}
	}
	if len(pending) > 0 {
		return missingToolResults(order, pending)
	}
	return nil
}

func missingToolResults(order []string, pending map[string]bool) *apierror.Error {
	var ids []string
	for _, id := range order {
		if pending[id] {
			ids = append(ids, id)
		}
	}
	return apierror.InvalidRequest(codeInvalidValue,
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+strings.Join(ids, ", "))
}

func validateContent(m Message, i int) *apierror.Error {
	c := bytes.TrimSpace(m.Content)
	switch {
	case len(c) == 0 || isNull(c):
		if m.Role == "assistant" {
			return nil // null content is how an assistant turn carries only tool calls
		}
		return apierror.InvalidRequest(codeInvalidType,
			fmt.Sprintf("Invalid type for 'messages[%d].content': expected one of a string or array of objects, but got null instead.", i))
	case c[0] == '"':
		return nil
	case c[0] == '[':
		var parts []map[string]json.RawMessage
		if err := json.Unmarshal(c, &parts); err != nil {
			return apierror.InvalidRequest(codeInvalidType,
				fmt.Sprintf("Invalid type for 'messages[%d].content': expected an array of objects.", i))
		}
		for j, p := range parts {
			var typ string
			_ = json.Unmarshal(p["type"], &typ)
			if _, ok := p[typ]; !ok || typ == "" {
				return apierror.InvalidRequest(codeMissingParam,
					fmt.Sprintf("Missing required parameter: 'messages[%d].content[%d].%s'.", i, j, cmp.Or(typ, "type")))
			}
		}
		return nil
	default:
		return apierror.InvalidRequest(codeInvalidType,
			fmt.Sprintf("Invalid type for 'messages[%d].content': expected one of a string or array of objects, but got %s instead.", i, jsonKind(c)))
	}
}

func mentionsJSON(msgs []Message) bool {
	for _, m := range msgs {
		if strings.Contains(strings.ToLower(m.Text()), "json") {
			return true
		}
	}
	return false
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

func jsonKind(b []byte) string {
	switch b[0] {
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}
