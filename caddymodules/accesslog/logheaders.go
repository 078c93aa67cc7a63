package accesslog

import (
	"strings"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap/zapcore"
)

func init() {
	caddy.RegisterModule(HeadersFilter{})
}

// HeadersFilter is a log field filter (`switchyard_headers`) for a field
// of HTTP headers, such as the access log's resp_headers: it writes the
// same JSON object as Caddy does, credentials redacted as Caddy redacts
// them, straight to the wrapped encoder. Through the filter encoder each
// header is looked up among the filters by its full name, its values
// boxed and its name lowered into a new string; on the gateway's
// answers, with their x-ratelimit-* headers, that was a fifth of the
// objects an access log line made. Filters on single headers
// (`resp_headers>Server delete`) no longer apply under it. Syntax:
//
//	resp_headers switchyard_headers
//
// A field that is not a header map is dropped, not logged unfiltered.
type HeadersFilter struct{}

// CaddyModule returns the Caddy module information.
func (HeadersFilter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.encoders.filter.switchyard_headers",
		New: func() caddy.Module { return new(HeadersFilter) },
	}
}

// UnmarshalCaddyfile reads the filter's name; it takes no options.
func (*HeadersFilter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the filter's name
	if d.NextArg() || d.NextBlock(0) {
		return d.Err("switchyard_headers takes no options")
	}
	return nil
}

// Filter hands the headers on to be written directly.
func (*HeadersFilter) Filter(in zapcore.Field) zapcore.Field {
	h, ok := in.Interface.(caddyhttp.LoggableHTTPHeader)
	if in.Type != zapcore.ObjectMarshalerType || !ok {
		in.Type = zapcore.SkipType
		return in
	}
	in.Interface = &loggedHeaders{LoggableHTTPHeader: h}
	return in
}

// loggedHeaders writes a header map as caddyhttp.LoggableHTTPHeader
// does. The list it hands the encoder for each header's values is part
// of it: one allocation, where the headers boxed and the list were two.
type loggedHeaders struct {
	caddyhttp.LoggableHTTPHeader
	values loggedValues // one for all headers: the encoder is done with it when AddArray returns
}

// redacted is what a credential header's values are logged as, Caddy's
// word for it.
var redacted = []string{"REDACTED"}

func (h *loggedHeaders) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	values := &h.values
	for name, vals := range h.Header {
		if !h.ShouldLogCredentials && isCredentialHeader(name) {
			vals = redacted
		}
		values.v = vals
		if err := enc.AddArray(name, values); err != nil {
			return err
		}
	}
	return nil
}

type loggedValues struct{ v []string }

func (l *loggedValues) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, s := range l.v {
		enc.AppendString(s)
	}
	return nil
}

// isCredentialHeader reports whether Caddy redacts the header name:
// cookie, set-cookie, authorization or proxy-authorization in any case,
// compared as strings.ToLower would, without making the lower-case copy
// for an ASCII name.
func isCredentialHeader(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			switch strings.ToLower(name) {
			case "cookie", "set-cookie", "authorization", "proxy-authorization":
				return true
			}
			return false
		}
	}
	switch len(name) {
	case len("cookie"), len("set-cookie"), len("authorization"), len("proxy-authorization"):
		return strings.EqualFold(name, "cookie") || strings.EqualFold(name, "set-cookie") ||
			strings.EqualFold(name, "authorization") || strings.EqualFold(name, "proxy-authorization")
	}
	return false
}

// Interface guards
var (
	_ logging.LogFieldFilter  = (*HeadersFilter)(nil)
	_ caddyfile.Unmarshaler   = (*HeadersFilter)(nil)
	_ zapcore.ObjectMarshaler = (*loggedHeaders)(nil)
)
