package routing

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/switchyardhq/switchyard/internal/jsonscan"
	"github.com/switchyardhq/switchyard/internal/jsonstr"
)

// State is what a pool's transport needs of, and tells about, one
// request: the body to send, and which upstream it went to.
type State struct {
	Body      []byte
	BodyModel string // the body's model field

	Attempts int    // round trips tried, over all pools
	Upstream string // the upstream of the latest attempt
	Model    string // the model whose pool made it

	// The body per upstream model name: nearly every request is sent
	// under one name, which rewrite holds without a map.
	rewrite   namedBody
	rewritten []namedBody // further names
}

type namedBody struct {
	model string
	body  []byte
}

// NewState is the state of a request whose body names model.
func NewState(body []byte, model string) *State {
	return &State{Body: body, BodyModel: model}
}

// BodyFor is the request body with model in place of the one it names,
// rewritten only when the names differ, and once per name. Every byte
// but the top-level model's value stays as the client sent it: key
// order, white space, escapes, and a "model" nested deeper.
func (s *State) BodyFor(model string) ([]byte, error) {
	if model == s.BodyModel || len(s.Body) == 0 {
		return s.Body, nil
	}
	if s.rewrite.body != nil && s.rewrite.model == model {
		return s.rewrite.body, nil
	}
	for _, r := range s.rewritten {
		if r.model == model {
			return r.body, nil
		}
	}
	b, err := SetModel(s.Body, model)
	if err != nil {
		return nil, err
	}
	if s.rewrite.body == nil {
		s.rewrite = namedBody{model, b}
	} else {
		s.rewritten = append(s.rewritten, namedBody{model, b})
	}
	return b, nil
}

// errNotObject is SetModel's error for a body that is not a JSON object.
var errNotObject = errors.New("rewriting the model: the body is not a JSON object")

// SetModel returns a copy of the JSON object body with the value of its
// top-level "model" member replaced by model (every such member, should
// the key come twice), or with the member added at the end when there is
// none. The body must be valid JSON, as the parse that read its model
// checked: the scan steps over strings without decoding them, so that a
// body of many megabytes costs one pass and one copy.
func SetModel(body []byte, model string) ([]byte, error) {
	// Where each model value starts and ends in body; a body names it
	// once, unless it is odd.
	var spanArray [1][2]int
	spans := spanArray[:0]
	ok := jsonscan.Members(body, func(key, value []byte) bool {
		if isModelKey(key) {
			// value is a slice of body, so its capacity tells where it
			// starts.
			start := cap(body) - cap(value)
			spans = append(spans, [2]int{start, start + len(value)})
		}
		return true
	})
	if !ok {
		return nil, errNotObject
	}
	var nameArray [64]byte // most names fit, quoted
	name := jsonstr.Append(nameArray[:0], model)
	if len(spans) == 0 {
		end := bytes.LastIndexByte(body, '}')
		out := make([]byte, 0, len(body)+len(name)+len(`,"model":`))
		out = append(out, body[:end]...)
		if !emptyObject(body[:end]) {
			out = append(out, ',')
		}
		out = append(out, `"model":`...)
		out = append(out, name...)
		return append(out, body[end:]...), nil
	}
	size := len(body)
	for _, sp := range spans {
		size += len(name) - (sp[1] - sp[0])
	}
	out := make([]byte, 0, size)
	last := 0
	for _, sp := range spans {
		out = append(out, body[last:sp[0]]...)
		out = append(out, name...)
		last = sp[1]
	}
	return append(out, body[last:]...), nil
}

// isModelKey reports whether the raw key (quotes and escapes included)
// names "model", however it is escaped.
func isModelKey(key []byte) bool {
	if string(key) == `"model"` {
		return true
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return false
	}
	var name string
	return json.Unmarshal(key, &name) == nil && name == "model"
}

// emptyObject reports whether head, an object up to its closing brace,
// has no member yet.
func emptyObject(head []byte) bool {
	return len(bytes.TrimSpace(head)) == 1 // the opening brace alone
}

// Attempt records a round trip of model's pool to upstream, and reports
// whether it retries an earlier one.
func (s *State) Attempt(model, upstream string) (retry bool) {
	s.Attempts++
	s.Upstream, s.Model = upstream, model
	return s.Attempts > 1
}
