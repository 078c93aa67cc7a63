package upstream

import (
	"bytes"
	"encoding/json"
)

// wireToolCall is one piece of a tool call in a delta.
type wireToolCall struct {
	Index    *int   `json:"index"` // absent in some Ollama versions
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a string, or an object from some servers
	} `json:"function"`
}

// wireToolCalls is delta.tool_calls: an array, or, from Text Generation
// Inference 2.0 (whose delta held one DeltaToolCall), a single object.
type wireToolCalls []wireToolCall

func (w *wireToolCalls) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var one wireToolCall
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*w = wireToolCalls{one}
		return nil
	}
	var many []wireToolCall
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*w = many
	return nil
}

// unwrapNamedArguments reads a call that came without a name, as Text
// Generation Inference 2 streams one: the name inside the arguments,
// {"function": {"_name": NAME, ...arguments}}. It returns the call with
// an empty name when args is not of that form.
func unwrapNamedArguments(args string) Function {
	var outer struct {
		Function map[string]json.RawMessage `json:"function"`
	}
	if json.Unmarshal([]byte(args), &outer) != nil || outer.Function == nil {
		return Function{Arguments: args}
	}
	var name string
	if json.Unmarshal(outer.Function["_name"], &name) != nil || name == "" {
		return Function{Arguments: args}
	}
	delete(outer.Function, "_name")
	rest, err := json.Marshal(outer.Function)
	if err != nil {
		return Function{Arguments: args}
	}
	return Function{Name: name, Arguments: string(rest)}
}
