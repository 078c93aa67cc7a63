package billing

import (
	"bytes"
	"encoding/json"
)

// Meter reads the usage an OpenAI-compatible backend reports in a
// /v1 response as it passes through: the "usage" object of a JSON answer,
// or of the final chunk of an event stream. It is created per response
// and is not safe for concurrent use.
//
// A stream whose client did not ask for usage was asked for it upstream
// on the client's behalf (see RequestUsage); the meter then drops the
// usage-only chunk, so the client sees the stream it asked for.
type Meter struct {
	stream    bool
	dropUsage bool

	line      []byte // an incomplete line carried over between writes
	skipBlank bool   // the line after a dropped chunk ends its event
	json      bytes.Buffer
	usage     usageCounts

	// contentChars counts the answer characters streamed, for an
	// estimate when the stream breaks off before its usage chunk.
	contentChars int64
}

type usageCounts struct {
	Prompt     int64 `json:"prompt_tokens"`
	Completion int64 `json:"completion_tokens"`
	found      bool
}

// maxMeteredJSON bounds how much of a JSON answer is kept to read its
// usage; answers are far smaller.
const maxMeteredJSON = 8 << 20

// NewMeter returns a meter for an event stream or a JSON answer.
// dropUsage removes the usage-only chunk of a stream.
func NewMeter(stream, dropUsage bool) *Meter {
	return &Meter{stream: stream, dropUsage: stream && dropUsage}
}

// Write takes the next bytes of the response and returns what to send
// to the client: p itself, or for a stream whose usage chunk is dropped,
// the complete lines of p without that chunk.
func (m *Meter) Write(p []byte) []byte {
	if !m.stream {
		if m.json.Len()+len(p) <= maxMeteredJSON {
			m.json.Write(p)
		}
		return p
	}
	var out []byte
	if m.dropUsage {
		out = make([]byte, 0, len(p))
	}
	data := append(m.line, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i+1]
		data = data[i+1:]
		usageOnly := m.readLine(line)
		if !m.dropUsage {
			continue
		}
		switch {
		case usageOnly:
			m.skipBlank = true // drop the chunk and the blank line ending it
		case m.skipBlank && len(bytes.TrimRight(line, "\r\n")) == 0:
			m.skipBlank = false
		default:
			m.skipBlank = false
			out = append(out, line...)
		}
	}
	m.line = append(m.line[:0:0], data...)
	if !m.dropUsage {
		return p
	}
	return out
}

// readLine notes what one SSE line says, and reports whether it is a
// usage-only chunk (no choices).
func (m *Meter) readLine(line []byte) (usageOnly bool) {
	payload, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if !ok {
		return false
	}
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || payload[0] != '{' {
		return false
	}
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
		Usage *usageCounts `json:"usage"`
	}
	if json.Unmarshal(payload, &chunk) != nil {
		return false
	}
	for _, c := range chunk.Choices {
		m.contentChars += int64(len([]rune(c.Delta.Content)))
	}
	if chunk.Usage != nil {
		m.usage = *chunk.Usage
		m.usage.found = true
		return len(chunk.Choices) == 0
	}
	return false
}

// Usage returns the token counts the backend reported, or, when it
// reported none (a stream that broke off), an estimate of the completion
// at about four characters per token and estimated true.
func (m *Meter) Usage() (prompt, completion int64, estimated bool) {
	if !m.stream {
		var body struct {
			Usage *usageCounts `json:"usage"`
		}
		if json.Unmarshal(m.json.Bytes(), &body) == nil && body.Usage != nil {
			return body.Usage.Prompt, body.Usage.Completion, false
		}
		return 0, 0, true
	}
	if m.usage.found {
		return m.usage.Prompt, m.usage.Completion, false
	}
	return 0, (m.contentChars + 3) / 4, true
}

// RequestUsage prepares a /v1 request body for metering. It reports
// whether the request streams, and for a stream that did not ask for usage
// returns the body asking for it (stream_options.include_usage), with
// dropUsage true so that the Meter removes the extra chunk again. Bodies
// that are not JSON objects are returned unchanged.
func RequestUsage(body []byte) (out []byte, stream, dropUsage bool) {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return body, false, false
	}
	if s, ok := req["stream"]; !ok || string(bytes.TrimSpace(s)) != "true" {
		return body, false, false
	}
	var opts map[string]json.RawMessage
	if raw, ok := req["stream_options"]; ok && json.Unmarshal(raw, &opts) != nil {
		return body, true, false // malformed; the backend will say so
	}
	if v, ok := opts["include_usage"]; ok && string(bytes.TrimSpace(v)) == "true" {
		return body, true, false
	}
	if opts == nil {
		opts = map[string]json.RawMessage{}
	}
	opts["include_usage"] = json.RawMessage("true")
	raw, _ := json.Marshal(opts)
	req["stream_options"] = raw
	rewritten, err := json.Marshal(req)
	if err != nil {
		return body, true, false
	}
	return rewritten, true, true
}

// EstimatePromptTokens estimates a request's prompt tokens from its body
// at about four bytes per token, for streams that broke off before the
// backend reported usage.
func EstimatePromptTokens(body []byte) int64 { return int64(len(body)+3) / 4 }
