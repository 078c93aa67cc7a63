package accesslog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// exampleFormat is the access log's format block of Caddyfile.example,
// under the name of either encoder.
func exampleFormat(name string) string {
	return name + ` {
		wrap json
		request>headers delete
		request>uri switchyard_trim {
			drop_query
			max_chars 256
		}
		request>host switchyard_trim {
			max_chars 256
		}
		resp_headers switchyard_headers
	}`
}

// nestedFormat filters at every level Caddy's filter encoder does: top
// level fields of a line and of a logger's With, fields of objects in
// objects, arrays, a field renamed, values of every kind.
func nestedFormat(name string) string {
	return name + ` {
		wrap json
		secret delete
		count replace "many"
		tags replace "some"
		err rename failure
		outer>inner>token replace "REDACTED"
		outer>inner>deeper>level delete
		outer>name regexp ^(.{3}).+$ "$1…"
		outer>list delete
		outer>ip ip_mask 16 32
		request>remote_ip ip_mask 24 32
		request>uri query {
			delete api_key
		}
	}`
}

// provisionedEncoders returns Caddy's filter encoder and
// switchyard_filter, each read from format under its own name and
// provisioned as Caddy would.
func provisionedEncoders(t testing.TB, format func(string) string) (caddys, ours zapcore.Encoder) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	c := new(logging.FilterEncoder)
	if err := c.UnmarshalCaddyfile(caddyfile.NewTestDispenser(format("filter"))); err != nil {
		t.Fatal(err)
	}
	if err := c.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	o := new(FilterEncoder)
	if err := o.UnmarshalCaddyfile(caddyfile.NewTestDispenser(format("switchyard_filter"))); err != nil {
		t.Fatal(err)
	}
	if err := o.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	return c, o
}

// logLine writes one line through enc the way Caddy's access log does:
// fields from a logger's With, then the line's own.
func logLine(t *testing.T, enc zapcore.Encoder, with, fields []zap.Field) []byte {
	t.Helper()
	var buf bytes.Buffer
	core := zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.DebugLevel)
	logger := zap.New(core).With(with...)
	logger.Info("handled request", fields...)
	return buf.Bytes()
}

// fixedTime stands in for the entry's time, which differs between two
// lines written one after the other; the rest of the line, the order
// of its fields included, stays as written.
func fixedTime(line []byte) []byte {
	return entryTime.ReplaceAll(line, []byte(`"ts":0`))
}

var entryTime = regexp.MustCompile(`"ts":[0-9.e+-]+`)

// comparable is line with its time fixed and the members of its header
// objects in name order: every encoder writes an http.Header, a map, in
// Go's random order, so two lines that are the same differ there.
func comparable(line []byte) []byte {
	return headerObject.ReplaceAllFunc(fixedTime(line), func(m []byte) []byte {
		at := bytes.IndexByte(m, '{')
		var members map[string]json.RawMessage
		if json.Unmarshal(m[at:], &members) != nil {
			return m
		}
		sorted, _ := json.Marshal(members) // a map's keys in order
		return append(m[:at:at], sorted...)
	})
}

var headerObject = regexp.MustCompile(`"(headers|resp_headers)":\{[^{}]*\}`)

type object map[string]any

func (o object) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for _, k := range slices.Sorted(maps.Keys(o)) {
		switch v := o[k].(type) {
		case string:
			enc.AddString(k, v)
		case int:
			enc.AddInt(k, v)
		case bool:
			enc.AddBool(k, v)
		case float64:
			enc.AddFloat64(k, v)
		case time.Duration:
			enc.AddDuration(k, v)
		case []byte:
			enc.AddByteString(k, v)
		case []string:
			if err := enc.AddArray(k, zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
				for _, s := range v {
					a.AppendString(s)
				}
				return nil
			})); err != nil {
				return err
			}
		case object:
			if err := enc.AddObject(k, v); err != nil {
				return err
			}
		default:
			if err := enc.AddReflected(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestFilterEncoderWritesWhatCaddysWrites(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "http://api.example.com/v1/chat/completions?api_key=sk-secret&x=1", nil)
	req.RemoteAddr = "203.0.113.77:54321"
	req.Header.Set("Authorization", "Bearer sk-secret")
	req.Header.Set("User-Agent", "openai-go")
	longReq := httptest.NewRequest(http.MethodGet, "http://"+strings.Repeat("h", 300)+"/"+strings.Repeat("例", 300)+"?k=v", nil)
	respHeaders := http.Header{"X-Request-Id": {"0b5c3f4e"}}
	credHeaders := http.Header{"Set-Cookie": {"session=1"}}

	inner := object{"token": "tok-123", "keep": 7, "deeper": object{"level": "gone", "stays": true}}
	outer := object{
		"inner": inner, "name": "switchyard", "list": []string{"a", "b"}, "ip": "198.51.100.23",
		"other": object{"token": "not filtered here"}, "bytes": []byte("raw"), "wait": 1500 * time.Millisecond,
		"reflected": struct{ A int }{3},
	}
	for _, tc := range []struct {
		name         string
		format       func(string) string
		with, fields []zap.Field
	}{
		{"the example's access log", exampleFormat,
			[]zap.Field{zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req})},
			[]zap.Field{zap.Int("bytes_read", 12), zap.String("user_id", ""), zap.Duration("duration", time.Millisecond),
				zap.Int("size", 300), zap.Int("status", 200),
				zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: respHeaders}),
				zap.String("request_id", "0b5c3f4e"), zap.Int64("cost_cents", 3)}},
		{"the example's access log, long host and path", exampleFormat,
			[]zap.Field{zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: longReq})},
			[]zap.Field{zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: credHeaders})}},
		{"the example's access log, a line without filtered fields", exampleFormat,
			nil, []zap.Field{zap.String("msg2", "x"), zap.Int("n", 1)}},
		{"filters at every level", nestedFormat,
			[]zap.Field{zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req}), zap.String("secret", "with")},
			[]zap.Field{zap.String("secret", "s"), zap.Int("count", 42), zap.Strings("tags", []string{"x", "y"}),
				zap.Error(errors.New("boom")), zap.Object("outer", outer), zap.Object("inner", inner),
				zap.Bool("plain", true), zap.Namespace("ns"), zap.String("after", "namespace")}},
		{"filters at every level, nothing filtered", nestedFormat,
			nil, []zap.Field{zap.String("a", "b"), zap.Object("elsewhere", inner)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caddys, ours := provisionedEncoders(t, tc.format)
			want := comparable(logLine(t, caddys, tc.with, tc.fields))
			got := comparable(logLine(t, ours, tc.with, tc.fields))
			if !bytes.Equal(got, want) {
				t.Fatalf("switchyard_filter wrote\n%s\nCaddy's filter encoder\n%s", got, want)
			}
			var line map[string]any
			if err := json.Unmarshal(got, &line); err != nil {
				t.Fatalf("not one JSON line: %v\n%s", err, got)
			}
		})
	}
}

// A line's filtered values end up where Caddy's would: the comparison
// above could pass with both encoders broken the same way.
func TestFilterEncoderFiltersTheExamplesFields(t *testing.T) {
	_, ours := provisionedEncoders(t, exampleFormat)
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions?api_key=sk-secret", nil)
	req.Header.Set("Authorization", "Bearer sk-secret")
	line := logLine(t, ours, []zap.Field{zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req})},
		[]zap.Field{zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: http.Header{"Set-Cookie": {"s=1"}}})})
	var got struct {
		Request     map[string]any      `json:"request"`
		RespHeaders map[string][]string `json:"resp_headers"`
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(line), "sk-secret") {
		t.Errorf("the key is in the line: %s", line)
	}
	if _, ok := got.Request["headers"]; ok {
		t.Errorf("request headers were logged: %s", line)
	}
	if got.Request["uri"] != "/v1/chat/completions" {
		t.Errorf("uri = %v, want the path without its query", got.Request["uri"])
	}
	if want := []string{"REDACTED"}; !reflect.DeepEqual(got.RespHeaders["Set-Cookie"], want) {
		t.Errorf("Set-Cookie = %v, want %v", got.RespHeaders["Set-Cookie"], want)
	}
}

func TestFilterEncoderReadsFiltersConfiguration(t *testing.T) {
	o := new(FilterEncoder)
	d := caddyfile.NewTestDispenser(`switchyard_filter {
		wrap json
		fields {
			a delete
		}
		b regexp x y
		b regexp z w
	}`)
	if err := o.UnmarshalCaddyfile(d); err != nil {
		t.Fatal(err)
	}
	if len(o.FieldsRaw) != 2 || !strings.Contains(string(o.FieldsRaw["b"]), "multi_regexp") {
		t.Fatalf("fields = %s", o.FieldsRaw)
	}
	bad := caddyfile.NewTestDispenser(`switchyard_filter {
		a delete
		a delete
	}`)
	if err := new(FilterEncoder).UnmarshalCaddyfile(bad); err == nil {
		t.Fatal("two filters on one field were taken")
	}
}

// BenchmarkFilterEncoder writes the gateway's access log line, as Caddy
// does (the request by a logger's With, the rest by the line), through
// Caddy's filter encoder and through switchyard_filter.
func BenchmarkFilterEncoder(b *testing.B) {
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req.Header.Set("Authorization", "Bearer sk-secret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "OpenAI/Go 3.8.1")
	with := zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req})
	fields := []zap.Field{zap.Int("bytes_read", 120), zap.String("user_id", ""), zap.Duration("duration", time.Millisecond),
		zap.Int("size", 300), zap.Int("status", 200),
		zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: http.Header{
			"Content-Type": {"application/json"}, "X-Request-Id": {"0b5c3f4e"}, "X-Ratelimit-Remaining-Requests": {"599"}}}),
		zap.String("request_id", "0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10"), zap.String("account_id", "acct_3kq8Zp1"),
		zap.String("model", "switchyard-demo"), zap.Int64("prompt_tokens", 9), zap.Int64("completion_tokens", 12),
		zap.Int64("cost_cents", 1)}
	caddys, ours := provisionedEncoders(b, exampleFormat)
	for _, enc := range []struct {
		name string
		enc  zapcore.Encoder
	}{{"caddy", caddys}, {"switchyard", ours}} {
		b.Run(enc.name, func(b *testing.B) {
			core := zapcore.NewCore(enc.enc, zapcore.AddSync(io.Discard), zapcore.DebugLevel)
			logger := zap.New(core)
			b.ReportAllocs()
			for b.Loop() {
				logger.WithLazy(with).Info("handled request", fields...)
			}
		})
	}
}

// Without `wrap`, switchyard_filter writes lines as Caddy's default log
// does when it writes to a file or a pipe: it can stand in as the
// default log's format.
func TestFilterEncoderWithoutWrapWritesCaddysDefaultLines(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	ours := new(FilterEncoder)
	if err := ours.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	caddys := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
	req.Header.Set("Authorization", "Bearer sk-secret")
	with := []zap.Field{zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req}), zap.Duration("duration", time.Second)}
	fields := []zap.Field{zap.Error(errors.New("dial tcp: refused")), zap.Int("status", 502), zap.Strings("tried", []string{"a", "b"})}
	want := comparable(logLine(t, caddys, with, fields))
	got := comparable(logLine(t, ours, with, fields))
	if !bytes.Equal(got, want) {
		t.Fatalf("switchyard_filter wrote\n%s\nCaddy's default log\n%s", got, want)
	}
}

// Loggers made from one logger by With keep their own fields: the
// fields a With adds are kept, not written, so two Withs on one logger
// must not share where they keep them.
func TestFilterEncoderKeepsEachWithsFields(t *testing.T) {
	_, ours := provisionedEncoders(t, nestedFormat)
	var buf bytes.Buffer
	base := zap.New(zapcore.NewCore(ours, zapcore.AddSync(&buf), zapcore.DebugLevel)).With(zap.String("base", "b"))
	a := base.With(zap.String("which", "a"))
	b := base.With(zap.String("which", "b"), zap.String("secret", "s"))
	a.Info("one", zap.Int("n", 1))
	b.Info("two", zap.Int("n", 2))
	base.Info("three")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	for i, want := range []string{`"base":"b","which":"a","n":1}`, `"base":"b","which":"b","n":2}`, `"msg":"three","base":"b"}`} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d = %s, want it to end in %s", i+1, lines[i], want)
		}
	}
}

// reverse_proxy hands its logger three fields by With on every request
// (the upstream, the round trip's duration, the request), for a debug
// line a log at info drops: the clone they make keeps them in itself,
// one allocation, where its room for one field grew its list twice.
func TestFilterEncoderKeepsThreeWithFieldsInTheClone(t *testing.T) {
	_, ours := provisionedEncoders(t, exampleFormat)
	core := zapcore.NewCore(ours, zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	fields := []zapcore.Field{
		zap.String("upstream", "127.0.0.1:8000"),
		zap.Duration("duration", time.Millisecond),
		zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req}),
	}
	if n := testing.AllocsPerRun(100, func() { core.With(fields) }); n > 2 && !testenv.RaceEnabled {
		t.Errorf("a With of three fields allocates %v objects, want the core's and its encoder's", n)
	}
}

// A line with a filtered field is collected in a collector kept from
// line to line, list and all: a field deleted by its filter costs the
// line nothing.
func TestFilterEncoderCollectsALineWithoutAllocating(t *testing.T) {
	_, ours := provisionedEncoders(t, nestedFormat)
	fields := []zapcore.Field{zap.String("secret", "s"), zap.Int("n", 1)}
	ent := zapcore.Entry{Message: "line"}
	if n := testing.AllocsPerRun(100, func() {
		buf, err := ours.EncodeEntry(ent, fields)
		if err != nil {
			t.Fatal(err)
		}
		buf.Free()
	}); n != 0 && !testenv.RaceEnabled {
		t.Errorf("a line with a deleted field allocates %v objects, want none", n)
	}
}

// BenchmarkRequestOnAnotherLog is what a request costs a log that writes
// none of its lines, as the default log writes no access line: Caddy's
// access logger takes the request by With and is checked once.
func BenchmarkRequestOnAnotherLog(b *testing.B) {
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req.Header.Set("Authorization", "Bearer sk-secret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "OpenAI/Go 3.8.1")
	with := zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req})
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	ours := new(FilterEncoder)
	if err := ours.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	for _, enc := range []struct {
		name string
		enc  zapcore.Encoder
	}{{"caddy", zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())}, {"switchyard", ours}} {
		b.Run(enc.name, func(b *testing.B) {
			core := notThisLogger{zapcore.NewCore(enc.enc, zapcore.AddSync(io.Discard), zapcore.DebugLevel)}
			logger := zap.New(core)
			b.ReportAllocs()
			for b.Loop() {
				logger.WithLazy(with).Info("handled request")
			}
		})
	}
}

// notThisLogger takes no line, as Caddy's default log takes no line of
// the access logger's: enabled at every level, it refuses lines only
// when checked, after a logger's lazy With was applied to it.
type notThisLogger struct{ zapcore.Core }

func (c notThisLogger) With(fields []zapcore.Field) zapcore.Core {
	return notThisLogger{c.Core.With(fields)}
}

func (notThisLogger) Check(_ zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce
}

// An object with filters on its fields is written through them with
// one allocation, the object and the encoder that filters its fields
// together.
func TestNestedObjectIsOneAllocation(t *testing.T) {
	l := new(filterLevel)
	l.add([]string{"outer", "secret"}, new(logging.DeleteFilter))
	obj := zapcore.ObjectMarshalerFunc(func(enc zapcore.ObjectEncoder) error {
		enc.AddString("secret", "s")
		enc.AddString("name", "n")
		return nil
	})
	enc := new(marshalCounter)
	if n := testing.AllocsPerRun(100, func() { _ = addObject(enc, l, "outer", obj) }); n != 1 && !testenv.RaceEnabled {
		t.Errorf("a nested object allocates %v objects, want 1", n)
	}
	if enc.fields != 101 {
		t.Errorf("%d fields written, want the name alone each time", enc.fields)
	}
}
