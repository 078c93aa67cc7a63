package billing

import (
	"bytes"
	"strconv"

	"github.com/switchyardhq/switchyard/internal/jsonscan"
	"github.com/switchyardhq/switchyard/internal/sse"
)

// usagePlace is where in a stream event the meter found the usage.
type usagePlace uint8

const (
	usageNowhere    usagePlace = iota
	usageInChunk               // a chat or completions chunk's own "usage"
	usageInResponse            // a Responses event's "response"."usage"
)

// ShowCost makes the meter add "cost_cents" to the usage the client
// receives (X-Include-Cost: 1): price is what the request is charged for
// a usage, as the charge will price it. It must be called before Start.
//
// A stream's events that carry usage (a chat usage chunk, the Responses
// API's response.completed) get cost_cents in that usage object, every
// other event passes unchanged. A JSON answer is held until it ends, to
// add cost_cents to its usage; one larger than MaxMeteredJSON is sent on
// as it is once it outgrows the bound, without cost_cents, and so is one
// without a usage object the meter can read: the gateway adds no usage
// object of its own to a /v1 answer.
func (m *Meter) ShowCost(price func(Usage) int64) {
	m.price = price
	m.parser.KeepRaw = true
	m.holding = true
}

// ShowsCost reports whether the meter adds cost_cents (ShowCost), which
// changes the answer's length.
func (m *Meter) ShowsCost() bool { return m.price != nil }

// rewrites reports whether what the client receives of a stream is built
// event by event rather than passed on as it arrives.
func (m *Meter) rewrites() bool { return m.dropUsage || m.price != nil }

// relayed is what the client receives of ev: its bytes as read, or with
// cost_cents added to the usage it carries.
func (m *Meter) relayed(ev sse.Event) []byte {
	if m.price == nil || m.usageAt == usageNowhere {
		return ev.Raw
	}
	path := []string{"usage"}
	if m.usageAt == usageInResponse {
		path = []string{"response", "usage"}
	}
	data, ok := withCost(bytes.TrimSpace(ev.Data), m.price(m.usage), path...)
	if !ok {
		return ev.Raw
	}
	return replaceData(ev.Raw, data)
}

// holdJSON keeps p of a JSON answer whose cost is shown and returns what
// to send now: nothing while the answer fits MaxMeteredJSON, all of it
// held so far once it does not, and from then on p itself.
func (m *Meter) holdJSON(p []byte) []byte {
	if !m.holding {
		m.keepJSON(p)
		return p
	}
	if len(m.json)+len(p) <= MaxMeteredJSON {
		m.keepJSON(p)
		return nil
	}
	m.holding = false
	// A copy: keepJSON moves the tail it keeps within m.json.
	out := append(m.json[:len(m.json):len(m.json)], p...)
	m.keepJSON(p)
	return out
}

// closeJSON is the rest of a JSON answer whose cost is shown: the answer
// held, with cost_cents added to its usage when it has one.
func (m *Meter) closeJSON() []byte {
	if !m.holding {
		return nil
	}
	m.holding = false
	u, ok := jsonUsage(m.json, false)
	if !ok {
		return m.json
	}
	out, _ := withCost(m.json, m.price(u), "usage")
	return out
}

// withCost returns doc, a valid JSON object, with "cost_cents": cents set
// in the object that path names (its last member of each name, as a
// decode reads it), and false when there is no such object. The other
// members of that object keep their bytes; one named cost_cents that the
// backend sent is replaced.
func withCost(doc []byte, cents int64, path ...string) ([]byte, bool) {
	start, end, ok := memberSpan(doc, path)
	if !ok {
		return doc, false
	}
	b := make([]byte, 0, len(doc)+24)
	b = append(append(b, doc[:start]...), '{')
	n := 0
	ok = jsonscan.Members(doc[start:end], func(key, value []byte) bool {
		if string(key) == `"cost_cents"` {
			return true
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, key...), ':'), value...)
		n++
		return true
	})
	if !ok {
		return doc, false // not an object
	}
	if n > 0 {
		b = append(b, ',')
	}
	b = strconv.AppendInt(append(b, `"cost_cents":`...), cents, 10)
	return append(append(b, '}'), doc[end:]...), true
}

// memberSpan finds the value that path names in doc, as offsets into doc.
func memberSpan(doc []byte, path []string) (start, end int, ok bool) {
	v := doc
	for _, name := range path {
		quoted := strconv.Quote(name)
		var found []byte
		jsonscan.Members(v, func(key, value []byte) bool {
			if string(key) == quoted {
				found = value
			}
			return true
		})
		if found == nil {
			return 0, 0, false
		}
		// found is a slice of v: its offset is what its capacity lacks.
		start += cap(v) - cap(found)
		v = found
	}
	return start, start + len(v), true
}

// replaceData returns the raw event with its data lines replaced by one
// line of data; its other lines (event:, id:, comments, the blank line
// that ends it) stay as they were. Line breaks in data, which in JSON can
// only be white space, become spaces, so that it fits one line.
func replaceData(raw, data []byte) []byte {
	data = bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, data)
	out := make([]byte, 0, len(raw)+len(data))
	wrote := false
	for len(raw) > 0 {
		line, end, rest := cutLine(raw)
		raw = rest
		if !isDataLine(line) {
			out = append(append(out, line...), end...)
			continue
		}
		if !wrote {
			out = append(append(append(out, "data: "...), data...), end...)
			wrote = true
		}
	}
	return out
}

// cutLine splits the first line off b: its text, its line end ("\r\n",
// "\n", "\r", or none at the end of b) and what follows.
func cutLine(b []byte) (line, end, rest []byte) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		return b, nil, nil
	}
	j := i + 1
	if b[i] == '\r' && j < len(b) && b[j] == '\n' {
		j++
	}
	return b[:i], b[i:j], b[j:]
}

func isDataLine(line []byte) bool {
	return bytes.HasPrefix(line, []byte("data:")) || string(line) == "data"
}
