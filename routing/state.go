package routing

import (
	"encoding/json"
	"fmt"
)

// State is what a pool's transport needs of, and tells about, one
// request: the body to send, and which upstream it went to.
type State struct {
	Body      []byte
	BodyModel string // the body's model field

	Attempts int    // round trips tried, over all pools
	Upstream string // the upstream of the latest attempt
	Model    string // the model whose pool made it

	rewritten map[string][]byte // body per upstream model name
}

// NewState is the state of a request whose body names model.
func NewState(body []byte, model string) *State {
	return &State{Body: body, BodyModel: model}
}

// BodyFor is the request body with model in place of the one it names.
// It is re-encoded only when the names differ, and once per name.
func (s *State) BodyFor(model string) ([]byte, error) {
	if model == s.BodyModel || len(s.Body) == 0 {
		return s.Body, nil
	}
	if b, ok := s.rewritten[model]; ok {
		return b, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(s.Body, &fields); err != nil {
		return nil, fmt.Errorf("rewriting the model: %v", err)
	}
	name, _ := json.Marshal(model)
	fields["model"] = name
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	if s.rewritten == nil {
		s.rewritten = make(map[string][]byte)
	}
	s.rewritten[model] = b
	return b, nil
}

// Attempt records a round trip of model's pool to upstream, and reports
// whether it retries an earlier one.
func (s *State) Attempt(model, upstream string) (retry bool) {
	s.Attempts++
	s.Upstream, s.Model = upstream, model
	return s.Attempts > 1
}
