package upstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/jsonscan"
)

// decodeChunk fills c from data the way json.Unmarshal would, for the
// shape almost every chunk of a stream has:
// text (or reasoning) in choices[].delta, a finish reason, usage. It
// reports false for anything else, leaving c to json.Unmarshal: tool
// calls, a legacy function call, an error member, Groq's x_groq,
// llama.cpp's timings, a whole message, a key
// that appears twice or differs from one of ours only in case (which
// json.Unmarshal would take as ours), an escaped key, a number that is
// not a plain integer, a value of an unexpected type; and for data that
// is not valid JSON as json.Valid has it, which it checks while it reads
// the chunk's members (one pass where json.Valid was another).
//
// It exists because reflection-driven decoding of every chunk was the
// largest single cost of relaying a stream (BenchmarkDecodeChunk);
// FuzzDecodeChunk holds it to json.Unmarshal's answers.
func decodeChunk(data []byte, c *wireChunk) bool {
	known := []string{"choices", "usage", "error", "x_groq", "timings"}
	return membersOf(jsonscan.ValidMembers, data, known, func(key string, v []byte) bool {
		switch key {
		case "x_groq", "timings":
			return isNull(v) // usage elsewhere: the first and last chunks only
		case "choices":
			return decodeChoices(v, c)
		case "usage":
			return decodeUsage(v, c)
		case "error":
			c.Error = json.RawMessage("null") // as json.Unmarshal keeps it
			return isNull(v)
		}
		return true
	})
}

func decodeChoices(v []byte, c *wireChunk) bool {
	if isNull(v) {
		c.Choices = nil
		return true
	}
	c.Choices = []wireChoice{}
	return jsonscan.Elements(v, func(el []byte) bool {
		c.Choices = append(c.Choices, wireChoice{})
		ch := &c.Choices[len(c.Choices)-1]
		if isNull(el) {
			return true
		}
		return members(el, []string{"index", "delta", "message", "finish_reason"}, func(key string, v []byte) bool {
			switch key {
			case "index":
				return decodeInt(v, &ch.Index)
			case "delta":
				return decodeDelta(v, &ch.Delta)
			case "message":
				return false
			case "finish_reason":
				return decodeOptString(v, &ch.FinishReason)
			}
			return true
		})
	})
}

func decodeDelta(v []byte, d *wireDelta) bool {
	if isNull(v) {
		return true
	}
	return members(v, []string{"content", "reasoning_content", "reasoning", "tool_calls", "function_call"},
		func(key string, v []byte) bool {
			switch key {
			case "content":
				return decodeOptString(v, &d.Content)
			case "reasoning_content":
				return decodeOptString(v, &d.ReasoningContent)
			case "reasoning":
				return decodeOptString(v, &d.Reasoning)
			case "tool_calls", "function_call":
				return isNull(v)
			}
			return true
		})
}

func decodeUsage(v []byte, c *wireChunk) bool {
	if isNull(v) {
		c.Usage = nil
		return true
	}
	if v[0] != '{' {
		return false
	}
	u := new(wireUsage)
	c.Usage = u
	return members(v, []string{"prompt_tokens", "completion_tokens", "completion_tokens_details"}, func(key string, v []byte) bool {
		switch key {
		case "prompt_tokens":
			return decodeInt(v, &u.PromptTokens)
		case "completion_tokens":
			return decodeInt(v, &u.CompletionTokens)
		case "completion_tokens_details":
			if isNull(v) {
				return true
			}
			if v[0] != '{' {
				return false
			}
			d := new(wireUsageDetails)
			u.CompletionTokensDetails = d
			return members(v, []string{"reasoning_tokens"}, func(key string, v []byte) bool {
				if key == "reasoning_tokens" {
					return decodeInt(v, &d.ReasoningTokens)
				}
				return true
			})
		}
		return true
	})
}

// members calls f for each member of the object v with its key, known
// being the keys f decodes; f sees other keys only to skip them. It
// reports false when v is not an object, a key is escaped, repeated, or
// one of known but for case, or f reports false.
func members(v []byte, known []string, f func(key string, value []byte) bool) bool {
	return membersOf(jsonscan.Members, v, known, f)
}

// membersOf is members with the object split by scan: jsonscan.Members
// for a value inside one already checked, jsonscan.ValidMembers for a
// chunk not yet checked.
func membersOf(scan func([]byte, func(key, value []byte) bool) bool, v []byte, known []string, f func(key string, value []byte) bool) bool {
	var seen uint64 // bit i: known[i] was seen
	return scan(v, func(rawKey, value []byte) bool {
		if bytes.IndexByte(rawKey, '\\') >= 0 {
			return false
		}
		key := rawKey[1 : len(rawKey)-1]
		for i, k := range known {
			if string(key) == k {
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return f(k, value)
			}
			if strings.EqualFold(string(key), k) {
				return false
			}
		}
		return true
	})
}

func isNull(v []byte) bool { return string(v) == "null" }

// decodeInt decodes a plain integer (or null, which leaves n alone).
func decodeInt[T ~int | ~int64](v []byte, n *T) bool {
	if isNull(v) {
		return true
	}
	i, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || int64(T(i)) != i {
		return false
	}
	*n = T(i)
	return true
}

// decodeOptString decodes a string, or null into nil. A string with
// escapes, or bytes json.Unmarshal would replace, goes through it.
func decodeOptString(v []byte, s **string) bool {
	if isNull(v) {
		*s = nil
		return true
	}
	if v[0] != '"' {
		return false
	}
	raw := v[1 : len(v)-1]
	var str string
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		str = string(raw)
	} else if json.Unmarshal(v, &str) != nil {
		return false
	}
	*s = &str
	return true
}
