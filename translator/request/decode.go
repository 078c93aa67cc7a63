package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// rawJSON is one JSON value of the request body, as splitObject and
// splitArray cut it out: a slice of the body, not a copy, because inline
// images make bodies of many megabytes. The body stays unchanged while it
// is parsed, and nothing that outlives Parse keeps a rawJSON.
type rawJSON []byte

// decoder reads top-level fields, keeping the first error.
type decoder struct {
	fields members
	err    error
}

// field returns the member name of fields, nil when it has none.
func field(fields members, name string) rawJSON {
	v, _ := fields.get(name)
	return v
}

// raw returns a field that is present and not null.
func (d *decoder) raw(name string) (rawJSON, bool) {
	v, ok := d.fields.get(name)
	if !ok || isNull(v) {
		return nil, false
	}
	return v, true
}

func (d *decoder) str(name string) string {
	v, ok := d.raw(name)
	if !ok || d.err != nil {
		return ""
	}
	s, ok := decodeString(v)
	if !ok {
		d.err = typeError(name, "a string")
	}
	return s
}

// decodeString decodes a JSON string that is part of an already validated
// document. Inline images make strings of many megabytes, and each full
// json.Unmarshal scans its input twice, so a string without escapes is
// taken as it is.
func decodeString(v rawJSON) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

func (d *decoder) boolean(name string) bool {
	v, ok := d.raw(name)
	if !ok || d.err != nil {
		return false
	}
	// The literals themselves, as json.Unmarshal reads them, without its
	// decoder's state as garbage of every request ("stream" is in most).
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true
	case "false":
		return false
	}
	d.err = typeError(name, "a boolean")
	return false
}

// maxTokens reads the first of max_completion_tokens, max_tokens and
// max_output_tokens that is set and not null, as the /v1 probe does.
func (d *decoder) maxTokens() int64 {
	for _, name := range []string{"max_completion_tokens", "max_tokens", "max_output_tokens"} {
		v, ok := d.raw(name)
		if !ok || d.err != nil || isNull(v) {
			continue
		}
		var n int64
		if json.Unmarshal(v, &n) != nil || n < 0 {
			d.err = invalid(CodeInvalidParameter, name+" must be a non-negative integer.")
		}
		return n
	}
	return 0
}

func (d *decoder) includeUsage() bool {
	v, ok := d.raw("stream_options")
	if !ok || d.err != nil {
		return false
	}
	opts, ok := splitObject(v)
	if !ok {
		d.err = typeError("stream_options", "an object")
		return false
	}
	sub := decoder{fields: opts}
	b := sub.boolean("include_usage")
	if sub.err != nil {
		d.err = typeError("stream_options.include_usage", "a boolean")
	}
	return b
}

// samplingTypes are the sampling parameters passed upstream, with the JSON
// type each must have.
var samplingTypes = map[string]string{
	"temperature":       "number",
	"top_p":             "number",
	"presence_penalty":  "number",
	"frequency_penalty": "number",
	"seed":              "integer",
	"stop":              "stop",
}

// samplingNames are samplingTypes' names in order, so that the first
// error reported does not depend on the map's.
var samplingNames = slices.Sorted(maps.Keys(samplingTypes))

func (d *decoder) sampling() map[string]json.RawMessage {
	if d.err != nil {
		return nil
	}
	var out map[string]json.RawMessage
	for _, name := range samplingNames {
		v, ok := d.raw(name)
		if !ok {
			continue
		}
		if !hasSamplingType(v, samplingTypes[name]) {
			want := map[string]string{"number": "a number", "integer": "an integer", "stop": "a string or an array of strings"}[samplingTypes[name]]
			d.err = typeError(name, want)
			return nil
		}
		if out == nil {
			out = make(map[string]json.RawMessage)
		}
		out[name] = append(json.RawMessage(nil), v...)
	}
	return out
}

func hasSamplingType(v rawJSON, typ string) bool {
	switch typ {
	case "number":
		var f float64
		return json.Unmarshal(v, &f) == nil
	case "integer":
		var i int64
		return json.Unmarshal(v, &i) == nil
	default:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return true
		}
		var ss []string
		return json.Unmarshal(v, &ss) == nil
	}
}

// refuseUnsupported rejects fields that would silently change the meaning
// of the request if ignored.
func (d *decoder) refuseUnsupported() {
	if d.err != nil {
		return
	}
	for _, name := range []string{"tools", "functions"} {
		v, ok := d.raw(name)
		if !ok {
			continue
		}
		if list, ok := splitArray(v); ok && len(list) == 0 {
			continue
		}
		d.err = invalid(CodeUnsupportedParameter, name+" is not supported: the assistant runs its own tools.")
		return
	}
	if v, ok := d.raw("n"); ok {
		var n int
		if json.Unmarshal(v, &n) != nil || n != 1 {
			d.err = invalid(CodeUnsupportedParameter, "n must be 1: one answer is generated per request.")
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func isNull(v rawJSON) bool {
	return string(bytes.TrimSpace(v)) == "null"
}

func invalid(code, message string) *apierror.Error {
	return apierror.InvalidRequest(code, message)
}

func typeError(field, want string) *apierror.Error {
	return invalid(CodeInvalidType, field+" must be "+want+".")
}

// jsonErrorText describes a syntax error without echoing request bytes.
func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d.", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "the body must be a JSON object."
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
