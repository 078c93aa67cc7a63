package search

import "encoding/json"

// text is a JSON string field that tolerates what real answers hold
// instead: null, a missing key, or a value of another type all read as
// "". One odd field then costs one field, not the whole answer.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = text(s)
	}
	return nil
}

// decodeEach decodes every element of a JSON array into a T and converts
// it to a Result, skipping elements that are not objects of T's shape, so
// that one malformed result does not lose the others.
func decodeEach[T any](items []json.RawMessage, result func(T) Result) []Result {
	out := make([]Result, 0, len(items))
	for _, raw := range items {
		var v T
		if json.Unmarshal(raw, &v) == nil {
			out = append(out, result(v))
		}
	}
	return out
}
