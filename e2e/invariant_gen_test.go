package e2e

// The request generator of the billing invariant (invariant_test.go): a
// well-formed chat request for /v1 or /v3, then mutations of its JSON, of
// its bytes and of its HTTP framing, each kept as a step that can be left
// out again, so that a failing request can be cut down to the mutations
// that matter. Requests go over a raw TCP connection, so that the framing
// (duplicate headers, chunked bodies, Expect, unusual request targets,
// a client leaving half way through its own body) is exactly what the
// generator asked for, and each can be printed as a curl command.

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// wireReq is a request as it goes on the wire.
type wireReq struct {
	route  string // "v1" or "v3"
	method string
	target string      // the request-target, sent as is
	header [][2]string // in order; a name may repeat
	body   []byte
	// chunked sends the body with Transfer-Encoding: chunked in pieces
	// of chunk bytes, instead of Content-Length.
	chunked bool
	chunk   int
	// expect sends Expect: 100-continue and waits for the interim answer
	// (at most a second, as curl does) before the body.
	expect bool
}

func (w *wireReq) set(name, value string) {
	for i, h := range w.header {
		if strings.EqualFold(h[0], name) {
			w.header[i][1] = value
			return
		}
	}
	w.header = append(w.header, [2]string{name, value})
}

func (w *wireReq) get(name string) (string, bool) {
	for _, h := range w.header {
		if strings.EqualFold(h[0], name) {
			return h[1], true
		}
	}
	return "", false
}

func (w *wireReq) del(name string) {
	out := w.header[:0]
	for _, h := range w.header {
		if !strings.EqualFold(h[0], name) {
			out = append(out, h)
		}
	}
	w.header = out
}

// jsonDoc is a JSON object kept as its members' raw key and value text,
// so that keys can be escaped, repeated or respelled and values given any
// text, valid JSON or not.
type jsonDoc struct{ members [][2]string }

func (d *jsonDoc) bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range d.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m[0])
		b.WriteByte(':')
		b.WriteString(m[1])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (d *jsonDoc) index(key string) int {
	for i, m := range d.members {
		if m[0] == strconv.Quote(key) {
			return i
		}
	}
	return -1
}

// setValue sets the value of key, adding the member when it is missing.
func (d *jsonDoc) setValue(key, value string) {
	if i := d.index(key); i >= 0 {
		d.members[i][1] = value
		return
	}
	d.members = append(d.members, [2]string{strconv.Quote(key), value})
}

// Mutation stages: mutations of the JSON document run first, then those
// of the body's bytes, then those of the HTTP request.
const (
	stageDoc = iota
	stageBytes
	stageWire
)

// mutation is one change to a request, with its parameters drawn when it
// was generated: applying it again gives the same request.
type mutation struct {
	name  string // as the report shows it
	stage int
	doc   func(*jsonDoc)
	bytes func([]byte, *wireReq) []byte
	wire  func(*wireReq)
}

// cutKind is where the client leaves.
type cutKind int

const (
	cutNone        cutKind = iota
	cutInBody              // after sending part of its body
	cutAfterSend           // once the request is sent, before any answer
	cutAfterHeader         // once the answer's headers arrived
	cutAfterBytes          // after reading some bytes of the answer's body
	cutAfterDelay          // after a time, wherever it is then
)

type clientCut struct {
	kind  cutKind
	n     int           // bytes, for cutInBody and cutAfterBytes
	delay time.Duration // for cutAfterDelay
}

func (c clientCut) String() string {
	switch c.kind {
	case cutInBody:
		return fmt.Sprintf("the client leaves after sending %d bytes of its body", c.n)
	case cutAfterSend:
		return "the client leaves as soon as its request is sent"
	case cutAfterHeader:
		return "the client leaves once the answer's headers arrive"
	case cutAfterBytes:
		return fmt.Sprintf("the client leaves after reading %d bytes of the answer", c.n)
	case cutAfterDelay:
		return fmt.Sprintf("the client leaves after %s", c.delay)
	}
	return "the client reads the whole answer"
}

// usageKind is the shape of the usage a scripted answer reports.
type usageKind int

const (
	usageNormal   usageKind = iota
	usageHuge               // beyond any plausible request: the charge is the cap
	usageNegative           // negative counts, which count as zero
)

// replyPlan is what the scripted upstream answers a request with.
type replyPlan struct {
	status     int // 0: an answer; else this error status
	words      int // answer length in tokens
	prompt     int // reported usage
	completion int
	usage      usageKind
	breakAfter int           // cut the answer after this many frames (0: no cut)
	delay      time.Duration // before the answer
	earlyHints bool
	hang       bool // never answer (slot probes)
}

func (p replyPlan) String() string {
	switch {
	case p.hang:
		return "the backend answers nothing until the client leaves"
	case p.status != 0:
		return fmt.Sprintf("the backend refuses with %d", p.status)
	}
	s := fmt.Sprintf("the backend answers %d tokens and reports usage %d + %d", p.words, p.prompt, p.completion)
	if p.breakAfter > 0 {
		s += fmt.Sprintf(", cut after %d frames", p.breakAfter)
	}
	if p.delay > 0 {
		s += fmt.Sprintf(", after %s", p.delay)
	}
	if p.earlyHints {
		s += ", with 103 Early Hints first"
	}
	return s
}

// fuzzReq is one generated request: its base, its mutations, what the
// client does and what the upstream answers.
type fuzzReq struct {
	nonce   string // in the model name and the message: ties upstream calls and usage records to it
	route   string // "v1" or "v3"
	stream  bool   // the base asks for a stream
	maxTok  int    // the base's max_tokens, 0 for none
	words   string // the user message after the nonce
	reqID   string // X-Request-Id
	muts    []mutation
	cut     clientCut
	reply   replyPlan
	start   time.Duration // offset in its batch
	acct    *fuzzAccount
	key     *fuzzKey
	probe   bool // a stream-slot probe, not a generated request
	outcome outcome
}

// build is the request on the wire, the mutations applied in stage order.
func (q *fuzzReq) build() *wireReq {
	doc := q.doc()
	w := &wireReq{route: q.route, method: "POST", target: "/" + q.route + "/chat/completions"}
	w.set("Content-Type", "application/json")
	w.set("X-Request-Id", q.reqID)
	if q.key != nil {
		w.set("Authorization", "Bearer "+q.key.key)
	}
	body := doc.bytes()
	for _, m := range q.muts {
		if m.stage == stageBytes {
			body = m.bytes(body, w)
		}
	}
	w.body = body
	for _, m := range q.muts {
		if m.stage == stageWire {
			m.wire(w)
		}
	}
	return w
}

// namesModel reports whether q's JSON has a member spelled exactly
// "model": a gateway that reads only that spelling records no model for
// the others.
func (q *fuzzReq) namesModel() bool { return q.doc().index("model") >= 0 }

// doc is q's JSON document, its mutations applied.
func (q *fuzzReq) doc() *jsonDoc {
	doc := &jsonDoc{}
	doc.setValue("model", strconv.Quote(q.nonce))
	doc.setValue("messages", fmt.Sprintf(`[{"role":"user","content":%s}]`, strconv.Quote(q.nonce+" "+q.words)))
	if q.stream {
		doc.setValue("stream", "true")
		if q.route == "v1" {
			doc.setValue("stream_options", `{"include_usage":true}`)
		}
	}
	if q.maxTok > 0 {
		doc.setValue("max_tokens", strconv.Itoa(q.maxTok))
	}
	for _, m := range q.muts {
		if m.stage == stageDoc {
			m.doc(doc)
		}
	}
	return doc
}

func (q *fuzzReq) mutationNames() string {
	var names []string
	for _, m := range q.muts {
		names = append(names, m.name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "; ")
}

// variant is q under a new nonce, for a replay, with its mutation drop
// left out: drop = len(muts) leaves out the client's early exit, a
// negative drop nothing.
func (q *fuzzReq) variant(drop int, nonce string) *fuzzReq {
	c := *q
	c.nonce, c.reqID, c.outcome = nonce, "fzq-"+nonce, outcome{}
	c.muts = nil
	for i, m := range q.muts {
		if i != drop {
			c.muts = append(c.muts, m)
		}
	}
	if drop == len(q.muts) {
		c.cut = clientCut{}
	}
	return &c
}

// gen draws requests from one seeded source.
type gen struct{ rng *rand.Rand }

func (g gen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }
func (g gen) chance(p float64) bool         { return g.rng.Float64() < p }

var fillerWords = strings.Fields("the river runs past old mills and quiet towns under grey skies while ferries " +
	"cross at dawn carrying post bread and news from the far bank to the market")

// request draws a request for route with its mutations, client behaviour
// and reply; thrifty accounts get answers of exactly the minimum charge.
func (g gen) request(nonce, route string, thrifty bool) *fuzzReq {
	q := &fuzzReq{nonce: nonce, route: route, reqID: "fzq-" + nonce}
	q.stream = g.chance(0.55)
	if g.chance(0.4) {
		q.maxTok = 16 + g.rng.IntN(2000)
	}
	n := 3 + g.rng.IntN(20)
	words := make([]string, n)
	for i := range words {
		words[i] = fillerWords[g.rng.IntN(len(fillerWords))]
	}
	q.words = strings.Join(words, " ")

	for range g.rng.IntN(4) {
		q.muts = append(q.muts, g.mutation(q))
	}
	// Content types a meter has been found to pass unread are drawn more
	// often than their share of the list.
	if g.chance(0.12) {
		q.muts = append(q.muts, contentType(g.pick("multipart/form-data; boundary=x", "multipart/mixed; boundary=fz", "Multipart/Form-Data")))
	}
	q.cut = g.cut()
	q.reply = g.reply(thrifty)
	return q
}

func (g gen) cut() clientCut {
	switch r := g.rng.Float64(); {
	case r < 0.55:
		return clientCut{}
	case r < 0.60:
		return clientCut{kind: cutInBody, n: 1 + g.rng.IntN(40)}
	case r < 0.66:
		return clientCut{kind: cutAfterSend}
	case r < 0.76:
		return clientCut{kind: cutAfterHeader}
	case r < 0.90:
		return clientCut{kind: cutAfterBytes, n: 1 + g.rng.IntN(1500)}
	default:
		return clientCut{kind: cutAfterDelay, delay: time.Duration(1+g.rng.IntN(300)) * time.Millisecond}
	}
}

func (g gen) reply(thrifty bool) replyPlan {
	p := replyPlan{words: 8 + g.rng.IntN(70)}
	if thrifty {
		// At most 1,666 prompt tokens and no completion tokens round to
		// nothing and are charged the minimum, 1 cent: never more than
		// the smallest hold, so the account's floor stays at zero.
		p.prompt = 1 + g.rng.IntN(1666)
	} else {
		p.prompt, p.completion = g.rng.IntN(200_000), g.rng.IntN(20_000)
		switch r := g.rng.Float64(); {
		case r < 0.05:
			p.usage = usageHuge
			p.prompt = 1_700_000 + g.rng.IntN(1<<30)
			if g.chance(0.3) {
				p.prompt, p.completion = 1<<53+g.rng.IntN(1000), 1<<40
			}
		case r < 0.10:
			p.usage = usageNegative
			p.prompt, p.completion = -1-g.rng.IntN(1_000_000), g.rng.IntN(3000)
			if g.chance(0.5) {
				p.prompt, p.completion = p.completion, p.prompt
			}
		}
	}
	switch r := g.rng.Float64(); {
	case r < 0.06:
		p.status = []int{400, 429, 500, 503}[g.rng.IntN(4)]
	case r < 0.12:
		p.breakAfter = 1 + g.rng.IntN(p.words+3)
	case r < 0.18:
		p.delay = time.Duration(20+g.rng.IntN(200)) * time.Millisecond
	case r < 0.21:
		p.earlyHints = true
	}
	return p
}

// The mutations, each with its parameters drawn here.

func contentType(v string) mutation {
	name := "Content-Type: " + v
	if v == "" {
		name = "no Content-Type"
	}
	return mutation{name: name, stage: stageWire, wire: func(w *wireReq) {
		if v == "" {
			w.del("Content-Type")
			return
		}
		w.set("Content-Type", v)
	}}
}

func (g gen) mutation(q *fuzzReq) mutation {
	switch g.rng.IntN(17) {
	case 0, 1:
		return contentType(g.pick("", "text/plain", "application/json; charset=utf-8", "application/json;charset=\"UTF-8\"",
			"APPLICATION/JSON", "application/x-www-form-urlencoded", "application/octet-stream", "text/event-stream",
			"application/json; charset=latin1", "application/vnd.api+json", "application/json, multipart/form-data",
			" multipart/form-data; boundary=y", "multipart/form-data", "multipart/form-data; boundary=\"a b\"",
			"application/jsonl", "*/*", "application/json; boundary=x", "text/json"))
	case 2:
		first := g.pick("multipart/form-data; boundary=x", "text/plain", "application/json")
		second := g.pick("application/json", "multipart/form-data; boundary=x")
		return mutation{name: fmt.Sprintf("two Content-Type headers: %s, then %s", first, second), stage: stageWire, wire: func(w *wireReq) {
			w.del("Content-Type")
			w.header = append(w.header, [2]string{"Content-Type", first}, [2]string{"Content-Type", second})
		}}
	case 3:
		m := g.pick("PUT", "PATCH", "post", "Post", "GET", "DELETE", "OPTIONS")
		return mutation{name: "method " + m, stage: stageWire, wire: func(w *wireReq) { w.method = m }}
	case 4:
		tmpl := g.pick("/{v}/chat/completions/", "/{V}/chat/completions", "/{v}/Chat/Completions", "/{v}//chat/completions",
			"//{v}/chat/completions", "/{v}/./chat/completions", "/{v}/chat/../chat/completions", "/{v}/chat%2Fcompletions",
			"/{v}/chat%2fcompletions", "/%76{n}/chat/completions", "/{v}/chat/completions?stream=false", "/{v}/chat/completions;x=1",
			"/{v}/chat/completions%00", "/{v}/chat/completions/.", "/{v}/chat/%63ompletions", "/x/../{v}/chat/completions")
		return mutation{name: "path " + tmpl, stage: stageWire, wire: func(w *wireReq) {
			r := strings.NewReplacer("{v}", w.route, "{V}", strings.ToUpper(w.route), "{n}", w.route[1:])
			w.target = r.Replace(tmpl)
		}}
	case 5:
		enc := g.pick("gzip", "deflate", "identity", "br", "gzip-label-only", "GZIP")
		return mutation{name: "Content-Encoding " + enc, stage: stageBytes, bytes: func(b []byte, w *wireReq) []byte {
			var out bytes.Buffer
			switch enc {
			case "gzip", "GZIP":
				zw := gzip.NewWriter(&out)
				zw.Write(b)
				zw.Close()
				w.set("Content-Encoding", enc)
				return out.Bytes()
			case "deflate":
				zw, _ := flate.NewWriter(&out, flate.DefaultCompression)
				zw.Write(b)
				zw.Close()
				w.set("Content-Encoding", enc)
				return out.Bytes()
			case "gzip-label-only":
				w.set("Content-Encoding", "gzip")
				return b
			}
			w.set("Content-Encoding", enc)
			return b
		}}
	case 6:
		return mutation{name: "Expect: 100-continue", stage: stageWire, wire: func(w *wireReq) { w.expect = true }}
	case 7:
		size := 1 + g.rng.IntN(64)
		return mutation{name: fmt.Sprintf("Transfer-Encoding: chunked (%d-byte chunks)", size), stage: stageWire,
			wire: func(w *wireReq) { w.chunked, w.chunk = true, size }}
	case 8:
		key := g.pick(`"str\u0065am"`, `"\u0073tream"`, `"Stream"`, `"STREAM"`, `"stream "`, `"strEam"`)
		return mutation{name: "stream key spelled " + key, stage: stageDoc, doc: func(d *jsonDoc) {
			if i := d.index("stream"); i >= 0 {
				d.members[i][0] = key
				return
			}
			d.members = append(d.members, [2]string{key, "true"})
		}}
	case 9:
		v := g.pick(`"true"`, `1`, `0`, `null`, `[true]`, `{"on":true}`, `"false"`, `1.0`, `-0`, `"1"`, `true`, `false`, `"yes"`, `1e0`)
		return mutation{name: "stream: " + v, stage: stageDoc, doc: func(d *jsonDoc) { d.setValue("stream", v) }}
	case 10:
		first, second := g.pick("true", "false"), g.pick("true", "false", `"true"`)
		key2 := g.pick(`"stream"`, `"Stream"`, `"str\u0065am"`, `"STREAM"`)
		return mutation{name: fmt.Sprintf("stream twice: stream %s, then %s %s", first, key2, second), stage: stageDoc, doc: func(d *jsonDoc) {
			d.setValue("stream", first)
			d.members = append(d.members, [2]string{key2, second})
		}}
	case 11:
		key := g.pick("max_tokens", "max_completion_tokens", "max_output_tokens", `max_t\u006fkens`)
		v := g.pick("1000000000", "9007199254740993", "9223372036854775807", "18446744073709551616", "1e30", "-1", "0",
			"1.5", `"100"`, "null", "2147483648", "1e9")
		return mutation{name: fmt.Sprintf("%s: %s", key, v), stage: stageDoc, doc: func(d *jsonDoc) {
			d.members = append(d.members, [2]string{`"` + key + `"`, v})
		}}
	case 12:
		key, v := g.pick("temperature", "top_p", "presence_penalty"), g.pick("NaN", "Infinity", "-Infinity", "1e999", "-0.0", "nan")
		return mutation{name: fmt.Sprintf("%s: %s", key, v), stage: stageDoc, doc: func(d *jsonDoc) { d.setValue(key, v) }}
	case 13:
		form := g.pick(`"m\u006fdel"`, `"Model"`, "duplicate", `"MODEL"`)
		return mutation{name: "model key " + form, stage: stageDoc, doc: func(d *jsonDoc) {
			i := d.index("model")
			if i < 0 {
				return
			}
			if form == "duplicate" {
				v := d.members[i][1]
				d.members = append(d.members, [2]string{`"model"`, v[:len(v)-1] + `-dup"`})
				return
			}
			d.members[i][0] = form
		}}
	case 14:
		form := g.pick("bom", "trailing-object", "trailing-brace", "whitespace", "nul", "utf16", "utf16-bom", "latin1")
		return mutation{name: "body " + form, stage: stageBytes, bytes: func(b []byte, w *wireReq) []byte {
			switch form {
			case "bom":
				return append([]byte("\xEF\xBB\xBF"), b...)
			case "trailing-object":
				return append(b, []byte(`{"stream":true}`)...)
			case "trailing-brace":
				return append(b, '}')
			case "whitespace":
				return append(append([]byte(" \r\n\t"), b...), " \n"...)
			case "nul":
				return append(b, 0)
			case "utf16", "utf16-bom":
				u := utf16.Encode([]rune(string(b)))
				var out []byte
				if form == "utf16-bom" {
					out = []byte{0xFF, 0xFE}
				}
				for _, c := range u {
					out = binary.LittleEndian.AppendUint16(out, c)
				}
				w.set("Content-Type", "application/json; charset=utf-16")
				return out
			case "latin1":
				w.set("Content-Type", "application/json; charset=iso-8859-1")
				return bytes.Replace(b, []byte(" the "), []byte(" th\xe9 "), 1)
			}
			return b
		}}
	case 15:
		depth := 10 + g.rng.IntN(200)
		return mutation{name: fmt.Sprintf("metadata nested %d deep", depth), stage: stageDoc, doc: func(d *jsonDoc) {
			d.setValue("metadata", strings.Repeat("[", depth)+strings.Repeat("]", depth))
		}}
	default:
		v := g.pick(`{"include_usage":false}`, `{"include_usage":"yes"}`, `null`, `{"Include_Usage":true}`, `{"include_usage":true,"include_usage":false}`)
		return mutation{name: "stream_options: " + v, stage: stageDoc, doc: func(d *jsonDoc) { d.setValue("stream_options", v) }}
	}
}

// outcome is what the client saw.
type outcome struct {
	sent        time.Time
	status      int // final status; 0 when none arrived
	contentType string
	body        []byte // the first 4 KiB
	read        int    // body bytes read
	complete    bool   // the answer was read to its end
	left        bool   // the client left before the end of the answer
	err         string // a transport error, if any
}

// send performs q against addr over a connection of its own.
func (q *fuzzReq) send(addr string) outcome {
	w := q.build()
	o := outcome{sent: time.Now()}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		o.err = err.Error()
		return o
	}
	defer conn.Close()
	deadline := time.Now().Add(30 * time.Second)
	if q.cut.kind == cutAfterDelay {
		deadline = time.Now().Add(q.cut.delay)
	}
	conn.SetDeadline(deadline)

	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\n", w.method, w.target, addr)
	for _, h := range w.header {
		fmt.Fprintf(&head, "%s: %s\r\n", h[0], h[1])
	}
	if w.chunked {
		head.WriteString("Transfer-Encoding: chunked\r\n")
	} else {
		fmt.Fprintf(&head, "Content-Length: %d\r\n", len(w.body))
	}
	if w.expect {
		head.WriteString("Expect: 100-continue\r\n")
	}
	head.WriteString("Connection: close\r\n\r\n")
	body := w.body
	if w.chunked {
		var cb bytes.Buffer
		for rest := body; len(rest) > 0; {
			n := min(w.chunk, len(rest))
			fmt.Fprintf(&cb, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		cb.WriteString("0\r\n\r\n")
		body = cb.Bytes()
	}
	br := bufio.NewReader(conn)
	if _, err := conn.Write(head.Bytes()); err != nil {
		o.err, o.left = err.Error(), true
		return o
	}
	var early *http.Response // a final answer that came before the body was sent
	if w.expect {
		conn.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := br.Peek(1); err == nil {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				o.err = err.Error()
				return o
			}
			if resp.StatusCode >= 200 {
				early = resp
			}
		}
		conn.SetDeadline(deadline)
	}
	if early == nil {
		if q.cut.kind == cutInBody {
			conn.Write(body[:min(q.cut.n, len(body))])
			o.left = true
			return o
		}
		if _, err := conn.Write(body); err != nil {
			o.err, o.left = err.Error(), true
			return o
		}
		if q.cut.kind == cutAfterSend {
			o.left = true
			return o
		}
	}
	resp := early
	for resp == nil || (resp.StatusCode >= 100 && resp.StatusCode < 200) {
		resp, err = http.ReadResponse(br, nil)
		if err != nil {
			o.err, o.left = err.Error(), true
			return o
		}
	}
	o.status, o.contentType = resp.StatusCode, resp.Header.Get("Content-Type")
	if q.cut.kind == cutAfterHeader {
		o.left = true
		return o
	}
	limit := int64(-1)
	if q.cut.kind == cutAfterBytes {
		limit = int64(q.cut.n)
	}
	var buf bytes.Buffer
	var r io.Reader = resp.Body
	if limit >= 0 {
		r = io.LimitReader(resp.Body, limit)
	}
	n, err := io.Copy(&capped{&buf, 4 << 10}, r)
	o.read, o.body = int(n), buf.Bytes()
	switch {
	case err != nil:
		o.err, o.left = err.Error(), true
	case limit >= 0 && n == limit:
		// Exactly at the cut: the answer may or may not have more.
		var one [1]byte
		conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if k, _ := resp.Body.Read(one[:]); k > 0 {
			o.left = true
		} else {
			o.complete = true
		}
	default:
		o.complete = true
	}
	return o
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	buf *bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// curl is q as a shell command against base, with comments for what
// curl cannot do exactly (a client leaving half way) and what the backend
// answered.
func (q *fuzzReq) curl(base string) string {
	w := q.build()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s request %s; mutations: %s\n# %s; %s\n", q.route, q.nonce, q.mutationNames(), q.cut, q.reply)
	body := w.body
	if q.cut.kind == cutInBody {
		body = body[:min(q.cut.n, len(body))]
	}
	fmt.Fprintf(&b, "printf '%s' | curl -sS -N --path-as-is -X %s '%s%s'", printfEscape(body), shellQuote(w.method), base, w.target)
	hasCT := false
	for _, h := range w.header {
		if strings.EqualFold(h[0], "Content-Type") {
			hasCT = true
		}
		fmt.Fprintf(&b, " \\\n  -H '%s: %s'", shellQuote(h[0]), shellQuote(h[1]))
	}
	if !hasCT {
		b.WriteString(" \\\n  -H 'Content-Type:'")
	}
	if w.chunked {
		b.WriteString(" \\\n  -H 'Transfer-Encoding: chunked'")
	}
	if w.expect {
		b.WriteString(" -H 'Expect: 100-continue'")
	} else {
		b.WriteString(" -H 'Expect:'")
	}
	b.WriteString(" --data-binary @-")
	switch q.cut.kind {
	case cutAfterBytes:
		fmt.Fprintf(&b, " | head -c %d", q.cut.n)
	case cutAfterDelay:
		fmt.Fprintf(&b, " --max-time %.3f", q.cut.delay.Seconds())
	case cutAfterHeader, cutAfterSend:
		b.WriteString(" --max-time 0.05")
	}
	return b.String()
}

// printfEscape writes b for a single-quoted printf format.
func printfEscape(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == '\'':
			s.WriteString(`\047`)
		case c == '\\':
			s.WriteString(`\\`)
		case c == '%':
			s.WriteString("%%")
		case c >= 0x20 && c < 0x7f:
			s.WriteByte(c)
		default:
			fmt.Fprintf(&s, `\%03o`, c)
		}
	}
	return s.String()
}

func shellQuote(s string) string { return strings.ReplaceAll(s, "'", `'\''`) }

// TestGeneratorIsDeterministic: a seed and batch give the same requests,
// byte for byte, so that a printed seed replays its batch.
func TestGeneratorIsDeterministic(t *testing.T) {
	draw := func() [][]byte {
		g := gen{rand.New(rand.NewPCG(7, 3))}
		var out [][]byte
		for i := range 200 {
			q := g.request(fmt.Sprintf("fzdetb3r%d", i), []string{"v1", "v3"}[i%2], i%3 == 0)
			w := q.build()
			out = append(out, []byte(fmt.Sprintf("%s %s %q %v %d %v %+v %+v\n", w.method, w.target, w.header, w.chunked, w.chunk, w.expect, q.cut, q.reply)), w.body)
		}
		return out
	}
	a, b := draw(), draw()
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("draw %d differs:\n%q\n%q", i, a[i], b[i])
		}
	}
}

// TestCurlSendsTheGeneratedBody: the printf of a reproduction writes the
// exact bytes the harness sent, whatever they are.
func TestCurlSendsTheGeneratedBody(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to check the printed reproductions")
	}
	g := gen{rand.New(rand.NewPCG(11, 0))}
	checked := 0
	for i := range 300 {
		q := g.request(fmt.Sprintf("fzcurlb0r%d", i), "v1", false)
		q.cut = clientCut{}
		w := q.build()
		cmd := q.curl("http://127.0.0.1:1")
		line := cmd[strings.Index(cmd, "printf '"):]
		format := line[len("printf '"):strings.Index(line, "' | curl")]
		out, err := exec.Command(bash, "-c", "printf '"+format+"'").Output()
		if err != nil {
			t.Fatalf("%s: %v", q.mutationNames(), err)
		}
		if !bytes.Equal(out, w.body) {
			t.Fatalf("%s: printf writes %q, the harness sent %q", q.mutationNames(), out, w.body)
		}
		if out, err := exec.Command(bash, "-n", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("the reproduction is not a shell command: %v %s\n%s", err, out, cmd)
		}
		checked++
	}
	// Bodies with every byte value, and the quoting characters.
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	out, err := exec.Command(bash, "-c", "printf '"+printfEscape(append(all, `'%\"`...))+"'").Output()
	if err != nil || !bytes.Equal(out, append(all, `'%\"`...)) {
		t.Fatalf("every byte: %v, %q", err, out)
	}
	t.Logf("%d reproductions checked", checked)
}
