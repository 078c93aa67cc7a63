package accesslog

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// filterEncoder provisions Caddy's filter encoder, wrapping json, with
// the given fields' filters (JSON of caddy.logging.encoders.filter.*).
func filterEncoder(tb testing.TB, fields string) zapcore.Encoder {
	tb.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	var fe logging.FilterEncoder
	if err := json.Unmarshal([]byte(`{"wrap":{"format":"json"},"fields":`+fields+`}`), &fe); err != nil {
		tb.Fatal(err)
	}
	if err := fe.Provision(ctx); err != nil {
		tb.Fatal(err)
	}
	return &fe
}

func encodeLine(tb testing.TB, enc zapcore.Encoder, fields ...zapcore.Field) string {
	tb.Helper()
	buf, err := enc.EncodeEntry(zapcore.Entry{Message: "handled request", Time: time.Unix(1764288000, 0)}, fields)
	if err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// TestHeadersFilterMatchesCaddy encodes header maps through the filter
// encoder with and without switchyard_headers on resp_headers, and finds
// the same JSON: byte for byte for a single header (a map's order is
// random), the same object otherwise.
func TestHeadersFilterMatchesCaddy(t *testing.T) {
	plain := filterEncoder(t, `{"request>headers":{"filter":"delete"}}`)
	ours := filterEncoder(t, `{"request>headers":{"filter":"delete"},"resp_headers":{"filter":"switchyard_headers"}}`)
	answer := http.Header{
		"Content-Type":                   {"application/json"},
		"X-Request-Id":                   {"0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10"},
		"X-Ratelimit-Limit-Requests":     {"600"},
		"X-Ratelimit-Remaining-Requests": {"599"},
		"X-Ratelimit-Reset-Requests":     {"100ms"},
		"Vary":                           {"Origin", "Accept-Encoding"},
		"Set-Cookie":                     {"session=secret"},
		"set-cookie":                     {"session=secret2"},
		"AUTHORIZATION":                  {"Bearer sk-secret"},
		"Proxy-Authorization":            {"Basic c2VjcmV0"},
		"Cookie":                         {"a=b"},
		"Cookies":                        {"not a credential"},
		"X-Empty":                        {},
		"X-Quote":                        {`"q" \ <tag> ` + "\u2028 \x01 ünï"},
		"Coo\u212aie":                    {"kelvin sign, lowered to cookie"},
		"\u017fet-cookie":                {"long s, not lowered to set-cookie"},
	}
	var cases []http.Header
	for name, vals := range answer {
		cases = append(cases, http.Header{name: vals})
	}
	cases = append(cases, answer, http.Header{}, nil)
	for _, h := range cases {
		for _, creds := range []bool{false, true} {
			field := func() zapcore.Field {
				return zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: h, ShouldLogCredentials: creds})
			}
			want, got := encodeLine(t, plain, field()), encodeLine(t, ours, field())
			if len(h) <= 1 {
				if got != want {
					t.Errorf("%v (credentials %v):\n got %s\nwant %s", h, creds, got, want)
				}
				continue
			}
			var w, g any
			if err := json.Unmarshal([]byte(want), &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(got), &g); err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("credentials %v (-Caddy +switchyard_headers):\n%s", creds, diff)
			}
			if !creds && strings.Contains(got, "secret") {
				t.Errorf("a credential is logged: %s", got)
			}
		}
	}
}

func TestHeadersFilterDropsOtherFields(t *testing.T) {
	f := &HeadersFilter{}
	for _, in := range []zapcore.Field{
		zap.String("resp_headers", "X-Api-Key: sk-x"),
		zap.Object("resp_headers", caddyhttp.LoggableHTTPRequest{Request: &http.Request{}}),
		zap.Any("resp_headers", map[string][]string{"X-Api-Key": {"sk-x"}}),
	} {
		if got := f.Filter(in); got.Type != zapcore.SkipType {
			t.Errorf("%v: type %v, want it skipped", in, got.Type)
		}
	}
}

// marshalCounter is an encoder that marshals the objects it is handed
// into itself and counts the fields and arrays, keeping nothing.
type marshalCounter struct {
	zapcore.ObjectEncoder // nil: the tests call only what it overrides
	fields                int
}

func (c *marshalCounter) AddObject(_ string, v zapcore.ObjectMarshaler) error {
	return v.MarshalLogObject(c)
}

func (c *marshalCounter) AddArray(string, zapcore.ArrayMarshaler) error { c.fields++; return nil }
func (c *marshalCounter) AddString(string, string)                      { c.fields++ }

// The filter hands the headers on with the list their values are
// written through in one allocation.
func TestHeadersFilterWritesInOneAllocation(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-1"}, "Set-Cookie": {"a=b"}}
	field := zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: h})
	var f HeadersFilter
	enc := new(marshalCounter)
	if n := testing.AllocsPerRun(100, func() { f.Filter(field).AddTo(enc) }); n != 1 && !testenv.RaceEnabled {
		t.Errorf("filtering and writing the headers allocates %v objects, want 1", n)
	}
	if enc.fields != 101*len(h) {
		t.Errorf("%d headers written, want %d", enc.fields, 101*len(h))
	}
}
