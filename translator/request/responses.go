package request

import (
	"fmt"
	"net/http"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// ParseResponses validates a /v3/responses body (the Responses API's
// form) and its headers into the same Request that Parse returns, so
// that the orchestrator serves both alike. input is a string or a list of
// message items; instructions becomes the first, developer, message.
// Items that belong to a client-run tool loop (function_call,
// function_call_output, reasoning, item_reference) and the parameters
// that need responses stored by the server (previous_response_id,
// conversation, background) are refused: the assistant runs its own
// tools and keeps no responses.
func ParseResponses(body []byte, h http.Header, lim Limits) (*Request, error) {
	req, fields, err := parseCommon(body, h, lim)
	if err != nil {
		return nil, err
	}
	req.Responses = true
	// A Responses stream always ends with its usage, in response.completed.
	req.IncludeUsage = true
	d := decoder{fields: fields}
	for _, name := range []string{"previous_response_id", "conversation"} {
		if _, ok := d.raw(name); ok {
			return nil, invalid(CodeUnsupportedParameter, name+
				" is not supported: responses are not stored; send the whole conversation in input.")
		}
	}
	if d.boolean("background") {
		return nil, invalid(CodeUnsupportedParameter, "background is not supported: responses are not stored; stream the answer instead.")
	}
	instructions := d.str("instructions")
	if d.err != nil {
		return nil, d.err
	}
	msgs, err := parseInput(field(fields, "input"), lim)
	if err != nil {
		return nil, err
	}
	if instructions != "" {
		msgs = append([]Message{{Role: RoleDeveloper, Parts: []Part{{Kind: PartText, Text: instructions}}}}, msgs...)
	}
	if err := checkMessageCount("input", "item", len(msgs), lim); err != nil {
		return nil, err
	}
	req.Messages = msgs
	if err := req.finishParse(fields, lim); err != nil {
		return nil, err
	}
	return req, nil
}

// parseInput reads input: a string, one user message, or a list of items.
func parseInput(v rawJSON, lim Limits) ([]Message, error) {
	if len(v) == 0 || isNull(v) {
		return nil, invalid(CodeMissingParameter, "input is required.")
	}
	if s, ok := decodeString(v); ok {
		return []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: s}}}}, nil
	}
	return messageList(v, "input", "a string or an array of input items", "item", lim, parseInputItem)
}

// parseInputItem reads one message item: {type:"message", role, content}
// or, as the SDKs' easy form, {role, content} without a type.
func parseInputItem(v rawJSON, at string, lim Limits) (Message, error) {
	fields, ok := splitObject(v)
	if !ok {
		return Message{}, typeError(at, "an object with role and content")
	}
	d := decoder{fields: fields}
	typ := d.str("type")
	if d.err != nil {
		return Message{}, typeError(at+".type", "a string")
	}
	switch typ {
	case "", "message":
	case "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "reasoning", "item_reference":
		return Message{}, invalid(CodeInvalidMessages, fmt.Sprintf(
			"%s.type %q is not supported: the assistant runs its own tools and keeps no responses; send message items.", at, typ))
	default:
		return Message{}, invalid(CodeInvalidMessages, fmt.Sprintf(
			"%s.type %q is not supported; send message items.", at, clip.Ellipsis(typ, 40)))
	}
	role, err := d.tag(at, "role")
	if err != nil {
		return Message{}, err
	}
	if err := checkRole(at, role); err != nil {
		return Message{}, err
	}
	m := Message{Role: role}
	content, ok := d.raw("content")
	if !ok {
		return Message{}, invalid(CodeMissingParameter, at+".content is required.")
	}
	if m.Parts, err = parseContent(content, at, m.IsSystem(), lim, parseInputPart); err != nil {
		return Message{}, err
	}
	return m, nil
}

// parseInputPart reads one content part of the Responses API: input_text
// and, in earlier assistant turns, output_text and refusal; input_file;
// input_image as a data URL or an uploaded file's file_id.
func parseInputPart(v rawJSON, at string, lim Limits) (Part, error) {
	d, typ, err := taggedObject(v, at, "type", "an object with a type")
	if err != nil {
		return Part{}, err
	}
	switch typ {
	case "input_text", "output_text", "refusal":
		key := "text"
		if typ == "refusal" {
			key = "refusal"
		}
		return textPart(&d, at, key)
	case "input_file":
		return filePart(d.fields, at)
	case "input_image":
		if _, ok := d.raw("file_id"); ok {
			if _, both := d.raw("image_url"); both {
				return Part{}, invalid(CodeInvalidContent, at+": send either image_url or file_id, not both.")
			}
			return filePart(d.fields, at)
		}
		url, ok := d.raw("image_url")
		if !ok {
			return Part{}, invalid(CodeMissingParameter, at+".image_url or "+at+".file_id is required.")
		}
		s, ok := decodeString(url)
		if !ok {
			return Part{}, typeError(at+".image_url", "a string (a data URL)")
		}
		return dataURLPart(s, at, lim)
	default:
		return Part{}, invalid(CodeInvalidContent, fmt.Sprintf(
			"%s.type %q is not supported; use input_text, input_file or input_image.", at, clip.Ellipsis(typ, 40)))
	}
}
