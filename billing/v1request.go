package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/jsonscan"
	"github.com/switchyardhq/switchyard/internal/jsonstr"
)

// MaxModelChars bounds the model string of a metered request. Model names
// are short; a longer one is refused rather than stored and echoed.
const MaxModelChars = 256

// V1Request is a /v1 JSON request body as the meter read it. Body is what
// is sent upstream: the client's bytes, or, for a stream that did not ask
// for usage, the same object with stream_options.include_usage added, so
// that what is billed is what the backend was asked.
type V1Request struct {
	Body   []byte
	Model  string
	Stream bool
	// DropUsage is set when usage was asked for on the client's behalf:
	// the Meter removes the usage-only chunk again.
	DropUsage bool
	// Responses is set on a Responses API body (ParseResponses).
	Responses bool
	// MaxTokens is the request's max_completion_tokens (or max_tokens;
	// of a Responses body, max_output_tokens), 0 when it sets none.
	MaxTokens int64
	// Prompt is what a prompt estimate counts (PromptEstimate): of a
	// Responses body the text of its input, instructions and tools; nil,
	// the whole body.
	Prompt []byte
}

// PromptEstimate estimates the request's prompt tokens, for an answer
// that reported no usage.
func (r V1Request) PromptEstimate() int64 {
	if r.Prompt != nil {
		return EstimatePromptTokens(r.Prompt)
	}
	return EstimatePromptTokens(r.Body)
}

// ParseV1 reads a /v1 request body strictly, as Go parses JSON: a body
// that is not exactly one JSON object (a byte-order mark, NaN, trailing
// data), a top-level key given twice in any letter case, a "stream" that
// is not a boolean, or a "model" that is not a short string is refused
// with 400, so that no backend can read a request differently from the
// meter. Errors are *apierror.Error.
func ParseV1(body []byte) (V1Request, error) {
	// The members are listed in a buffer of this frame: a body's are
	// few, and read here only.
	var buf [8]field
	fields, err := topLevelInto(buf[:0], body)
	if err != nil {
		return V1Request{}, err
	}
	if err := fields.exactNames(meteredNames); err != nil {
		return V1Request{}, err
	}
	req := V1Request{Body: body}
	if err := req.readModelStream(fields); err != nil {
		return V1Request{}, err
	}
	if err := refuseHostedSearch(fields); err != nil {
		return V1Request{}, err
	}
	for _, name := range []string{"max_completion_tokens", "max_tokens", "max_output_tokens"} {
		if v, ok := fields.get(name); ok && !isNull(v) {
			n, ok := decodeInt(v)
			if !ok || n < 0 {
				return V1Request{}, invalidParam(name + " must be a non-negative integer.")
			}
			req.MaxTokens = n
			break
		}
	}
	if !req.Stream {
		return req, nil
	}
	// The options' members are listed in this frame too.
	var optsBuf [4]field
	var opts fieldList
	if v, ok := fields.get("stream_options"); ok && !isNull(v) {
		if opts, err = topLevelInto(optsBuf[:0], v); err != nil {
			return V1Request{}, invalidParam("stream_options must be an object.")
		}
		if err := opts.exactNames([]string{"include_usage"}); err != nil {
			return V1Request{}, err
		}
		if u, ok := opts.get("include_usage"); ok && !isNull(u) {
			var include bool
			if !literalBool(u, &include) && json.Unmarshal(u, &include) != nil {
				return V1Request{}, invalidParam("stream_options.include_usage must be a boolean.")
			}
			if include {
				return req, nil
			}
		}
	}
	req.Body = fields.set("stream_options", fieldList(opts).set("include_usage", json.RawMessage("true")))
	req.DropUsage = true
	return req, nil
}

// readModelStream reads the "model" and "stream" of every /v1 body.
// What encoding/json decodes goes through variables of its own, so that
// req stays where its caller keeps it.
func (req *V1Request) readModelStream(fields fieldList) error {
	if v, ok := fields.get("model"); ok {
		if !plainModel(v, &req.Model) {
			var model string
			if json.Unmarshal(v, &model) != nil {
				return invalidParam("model must be a string.")
			}
			req.Model = model
		}
		if len(req.Model) > MaxModelChars {
			return invalidParam(fmt.Sprintf("model must be at most %d characters.", MaxModelChars))
		}
	}
	if v, ok := fields.get("stream"); ok && !isNull(v) {
		if !literalBool(v, &req.Stream) {
			var stream bool
			if json.Unmarshal(v, &stream) != nil {
				return invalidParam("stream must be a boolean.")
			}
			req.Stream = stream
		}
	}
	return nil
}

// plainModel reads a model name that is a JSON string without escapes,
// the common case, without encoding/json: one of the names /v1 bodies
// named lately (modelNames) when it is one, else a string of its own.
func plainModel(v json.RawMessage, out *string) bool {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return false
	}
	*out = modelName(v[1 : len(v)-1])
	return true
}

// modelNames are model names /v1 bodies named lately, by a hash of the
// name, a slot holding the last name that fell on it. A gateway serves a
// few models, and each request names one: the name's copy out of the
// body was an allocation a request, and a name seen before is now
// shared. A name a slot does not hold costs its string, and the slot's
// pointer to it, one allocation more than before: names that change
// with every request (a client that makes them up) cost that much, and
// a slot never holds more than one.
var (
	modelNames    [32]atomic.Pointer[string]
	modelNameSeed = maphash.MakeSeed()
)

// modelName is string(b), shared with an earlier body's when a slot of
// modelNames holds it.
func modelName(b []byte) string {
	slot := &modelNames[maphash.Bytes(modelNameSeed, b)%uint64(len(modelNames))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

// decodeInt reads a JSON integer as encoding/json reads it into an
// int64: a plain one without it, the common case, anything else through
// it (which refuses a fraction, an exponent and an overflow as well).
func decodeInt(v json.RawMessage) (int64, bool) {
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n, true
	}
	var n int64
	return n, json.Unmarshal(v, &n) == nil
}

func literalBool(v json.RawMessage, out *bool) bool {
	switch string(v) {
	case "true":
		*out = true
	case "false":
		*out = false
	default:
		return false
	}
	return true
}

// meteredNames are the members the meter reads. JSON keys are case
// sensitive, but Go's encoding/json (and so Ollama and other Go backends)
// matches them case-insensitively, with Unicode folding: {"MODEL":…} is a
// model there and no model here, and "Stream" a stream the meter would
// not see. A member that folds to one of these but is spelled otherwise
// is refused (exactNames).
var meteredNames = []string{"model", "stream", "stream_options", "max_completion_tokens", "max_tokens", "max_output_tokens"}

// exactNames refuses a member whose name equals one of names in letter
// case folding only. A name shorter than one of names cannot fold to
// it: strings.EqualFold matches rune by rune, and a rune is a byte or
// more, so most pairs are told apart by their lengths.
func (l fieldList) exactNames(names []string) error {
	for _, f := range l {
		for _, n := range names {
			if len(f.name) >= len(n) && f.name != n && strings.EqualFold(f.name, n) {
				return invalidParam(fmt.Sprintf("The request body names %q; member names are case-sensitive: write %q.", clip.Ellipsis(f.name, 40), n))
			}
		}
	}
	return nil
}

type field struct {
	name  string
	value json.RawMessage
}

type fieldList []field

func (l fieldList) get(name string) (json.RawMessage, bool) {
	for _, f := range l {
		if f.name == name {
			return f.value, true
		}
	}
	return nil, false
}

// set returns the object with name set to value, in place when present,
// else added at the end, every other member byte for byte as it was. It
// is encodeObject of l so changed, written without the changed list.
func (l fieldList) set(name string, value json.RawMessage) []byte {
	size := 2 + len(name) + len(value) + 4
	for _, f := range l {
		size += len(f.name) + len(f.value) + 4
	}
	b := append(make([]byte, 0, size), '{')
	found := false
	for i, f := range l {
		if f.name == name {
			f.value, found = value, true
		}
		b = appendMember(b, i, f)
	}
	if !found {
		b = appendMember(b, len(l), field{name, value})
	}
	return append(b, '}')
}

func encodeObject(fs fieldList) []byte {
	size := 2
	for _, f := range fs {
		size += len(f.name) + len(f.value) + 4
	}
	b := append(make([]byte, 0, size), '{')
	for i, f := range fs {
		b = appendMember(b, i, f)
	}
	return append(b, '}')
}

// appendMember appends f, the member at index i of its object, to b.
func appendMember(b []byte, i int, f field) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = jsonstr.Append(b, f.name)
	return append(append(b, ':'), f.value...)
}

// topLevel splits a JSON object into its members in order, refusing what
// is not one valid object and keys repeated in any letter case (some
// backends match keys case-insensitively, and which copy wins differs).
// A body is checked as json.Valid would while it is split
// (jsonscan.ValidMembers); one that is not a valid object goes through
// encoding/json's decoder (topLevelChecked) for the error to report.
func topLevel(body []byte) (fieldList, error) {
	return topLevelInto(make(fieldList, 0, 8), body)
}

// topLevelInto is topLevel appending the members to dst, which the
// caller may keep where it likes.
func topLevelInto(dst fieldList, body []byte) (fieldList, error) {
	fields := dst
	// The names seen, in lower case: compared one by one while they are
	// few, as a body's almost always are, and through a map past that.
	var folds [16]string
	var seen map[string]struct{}
	var err error
	object := jsonscan.ValidMembers(body, func(key, value []byte) bool {
		var name string
		if name, err = memberName(key); err != nil {
			return false
		}
		fold := strings.ToLower(name)
		twice := false
		if n := len(fields); n < len(folds) {
			twice = slices.Contains(folds[:n], fold)
			folds[n] = fold
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(folds))
				for _, f := range folds {
					seen[f] = struct{}{}
				}
			}
			_, twice = seen[fold]
			seen[fold] = struct{}{}
		}
		if twice {
			err = invalidJSON(fmt.Sprintf("The request body names %q more than once.", clip.Ellipsis(name, 40)))
			return false
		}
		fields = append(fields, field{name, json.RawMessage(value)})
		return true
	})
	if err != nil {
		// A name repeated: what came before it is valid, so the
		// decoder would stop at the same name.
		return nil, err
	}
	if !object {
		return topLevelChecked(body)
	}
	return fields, nil
}

// commonName is b as one of the member names most bodies have, given as
// a string made once rather than anew for every body.
func commonName(b []byte) (string, bool) {
	switch string(b) {
	case "model":
		return "model", true
	case "messages":
		return "messages", true
	case "stream":
		return "stream", true
	case "stream_options":
		return "stream_options", true
	case "include_usage":
		return "include_usage", true
	case "max_tokens":
		return "max_tokens", true
	case "max_completion_tokens":
		return "max_completion_tokens", true
	case "max_output_tokens":
		return "max_output_tokens", true
	case "temperature":
		return "temperature", true
	case "top_p":
		return "top_p", true
	case "tools":
		return "tools", true
	case "tool_choice":
		return "tool_choice", true
	case "input":
		return "input", true
	case "instructions":
		return "instructions", true
	case "prompt":
		return "prompt", true
	case "user":
		return "user", true
	}
	return "", false
}

// memberName decodes a member name: as it is when it has no escapes.
func memberName(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		if name, ok := commonName(raw[1 : len(raw)-1]); ok {
			return name, nil
		}
		return string(raw[1 : len(raw)-1]), nil
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return "", invalidJSON("The request body is not valid JSON.")
	}
	return name, nil
}

// topLevelChecked is topLevel by encoding/json's decoder, token by token:
// slower, and it tells what is wrong with an invalid body.
func topLevelChecked(body []byte) (fieldList, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, invalidJSON("The request body must be a JSON object.")
	}
	var fields fieldList
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidJSON("The request body is not valid JSON.")
		}
		name := tok.(string)
		if fold := strings.ToLower(name); seen[fold] {
			return nil, invalidJSON(fmt.Sprintf("The request body names %q more than once.", clip.Ellipsis(name, 40)))
		} else {
			seen[fold] = true
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalidJSON("The request body is not valid JSON.")
		}
		fields = append(fields, field{name, v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, invalidJSON("The request body is not valid JSON.")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalidJSON("The request body has data after its JSON object.")
	}
	return fields, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func invalidJSON(msg string) error { return apierror.InvalidRequest("invalid_json", msg) }

func invalidParam(msg string) error { return apierror.InvalidRequest("invalid_parameter", msg) }
