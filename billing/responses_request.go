package billing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/jsonscan"
)

// ParseResponses reads a Responses API body (POST /v1/responses) as
// strictly as ParseV1 reads the others: one JSON object, no key twice in
// any letter case, a boolean "stream", a short string "model", a
// non-negative integer "max_output_tokens", which sizes the hold. The body
// goes upstream unchanged: a Responses stream ends with
// response.completed, which carries the usage whatever the client asked.
//
// The gateway is stateless and its backend's store is the operator's
// account, shared by every tenant: what would read state stored there, or
// run the generation where the meter cannot see it, is refused with 400
// unsupported_parameter (previous_response_id, conversation, prompt, an
// input item_reference, background: true, a tool the backend runs itself,
// which it bills beside the tokens). Errors are *apierror.Error.
func ParseResponses(body []byte) (V1Request, error) {
	fields, err := topLevel(body)
	if err != nil {
		return V1Request{}, err
	}
	req := V1Request{Body: body, Responses: true}
	if err := req.readModelStream(fields); err != nil {
		return V1Request{}, err
	}
	if v, ok := fields.get("max_output_tokens"); ok && !isNull(v) {
		if json.Unmarshal(v, &req.MaxTokens) != nil || req.MaxTokens < 0 {
			return V1Request{}, invalidParam("max_output_tokens must be a non-negative integer.")
		}
	}
	if err := refuseStoredState(fields); err != nil {
		return V1Request{}, err
	}
	req.Prompt = responsesPrompt(fields)
	return req, nil
}

// storedStateParams are the Responses API's parameters that name state
// kept at the backend: another response, a conversation, a saved prompt.
var storedStateParams = []string{"previous_response_id", "conversation", "prompt"}

func refuseStoredState(fields fieldList) error {
	for _, f := range fields {
		for _, name := range storedStateParams {
			if strings.EqualFold(f.name, name) && !isNull(f.value) {
				return unsupportedParam(name + " is not supported: the gateway keeps no responses, conversations or prompts " +
					"of its own and serves none stored at its backend. Send the whole conversation in input.")
			}
		}
		if strings.EqualFold(f.name, "background") && string(bytes.TrimSpace(f.value)) == "true" {
			return unsupportedParam("background is not supported: a response generated in the background could not be metered. " +
				"Use stream: true for long answers.")
		}
		if strings.EqualFold(f.name, "tools") {
			if typ, ok := hostedTool(f.value); ok {
				return unsupportedParam(fmt.Sprintf("tools of type %q are not supported: a tool the backend runs itself "+
					"is billed by the backend beside the tokens, or reads what is stored at it, neither of which the gateway "+
					`can meter or keep apart per account. Tools of type "function" and "custom" are supported.`, clip.Ellipsis(typ, 40)))
			}
		}
		if strings.EqualFold(f.name, "input") && hasItemReference(f.value) {
			return unsupportedParam(`input items of type "item_reference" are not supported: the gateway serves no items ` +
				"stored at its backend. Send the items themselves (with store: false, reasoning items carry their encrypted content).")
		}
	}
	return nil
}

// clientTools are the tool types the client runs itself: the backend only
// generates their calls, which the usage counts.
var clientTools = map[string]bool{"function": true, "custom": true}

// hostedTool returns the type of the first tool in tools that the backend
// would run itself (web_search, file_search, code_interpreter, mcp,
// image_generation, ...), a tool without a type included.
func hostedTool(tools json.RawMessage) (string, bool) {
	typ, found := "", false
	jsonscan.Elements(tools, func(tool []byte) bool {
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(tool, &t) != nil || !clientTools[t.Type] {
			typ, found = t.Type, true
		}
		return !found
	})
	return typ, found
}

// hasItemReference reports whether the input array holds an item of type
// item_reference, spelt in any case.
func hasItemReference(input json.RawMessage) bool {
	found := false
	jsonscan.Elements(input, func(item []byte) bool {
		jsonscan.Members(item, func(key, value []byte) bool {
			var name, typ string
			if json.Unmarshal(key, &name) == nil && strings.EqualFold(name, "type") &&
				json.Unmarshal(value, &typ) == nil && strings.EqualFold(typ, "item_reference") {
				found = true
			}
			return !found
		})
		return !found
	})
	return found
}

// promptSkipKeys are the members of input items whose string values are not
// text the model reads: identifiers and enumerations.
var promptSkipKeys = map[string]bool{
	"type": true, "role": true, "id": true, "call_id": true, "status": true, "detail": true, "file_id": true,
}

// responsesPrompt is the text a prompt estimate of a Responses body
// counts: the instructions, every string of the input but identifiers
// and enumerations (input as a string, message texts, tool outputs,
// function-call arguments), and the tools' definitions as sent, which the
// backend puts before the model too. Newlines separate the parts. It is
// never nil, so that the estimate counts it rather than the body.
func responsesPrompt(fields fieldList) []byte {
	out := []byte{}
	if v, ok := fields.get("instructions"); ok {
		out = appendStrings(out, v, "")
	}
	if v, ok := fields.get("input"); ok {
		out = appendStrings(out, v, "")
	}
	if v, ok := fields.get("tools"); ok && !isNull(v) {
		out = append(append(out, v...), '\n')
	}
	return out
}

// appendStrings appends to out every string in v, which sits under key,
// each followed by a newline, except those under promptSkipKeys.
func appendStrings(out []byte, v []byte, key string) []byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return out
	}
	switch v[0] {
	case '"':
		if promptSkipKeys[key] {
			return out
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out = append(append(out, s...), '\n')
		}
	case '[':
		jsonscan.Elements(v, func(e []byte) bool {
			out = appendStrings(out, e, key)
			return true
		})
	case '{':
		jsonscan.Members(v, func(k, value []byte) bool {
			var name string
			if json.Unmarshal(k, &name) == nil {
				out = appendStrings(out, value, name)
			}
			return true
		})
	}
	return out
}

func unsupportedParam(msg string) error {
	return apierror.InvalidRequest("unsupported_parameter", msg)
}
