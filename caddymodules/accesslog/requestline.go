package accesslog

import (
	"context"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// A request's own fields of its access line (Switchyard's: its ids, its
// charge, its outcome) reach Caddy's encoders only through the request's
// extra log fields (caddyhttp.ExtraLogFields), whose first Set costs
// three allocations a request (a sync.Map it clears, and the list).
// switchyard_filter can find them itself, from the request its logger
// was handed: a config whose every log that may write an access line
// encodes with it (EncodersWriteRequestLines) leaves them out of the
// extra fields, and the encoder puts them where Caddy would have.

// RequestLine, when set, is the request's own fields of its access
// line, for a request that left them out of its extra log fields; nil
// for one that did not. caddymodules sets it, once.
var RequestLine func(ctx context.Context) zapcore.ObjectMarshaler

// encoderProbe is the object EncodersWriteRequestLines hands a core's
// encoders: switchyard_filter keeps it as it keeps every field of a
// With (collector.AddObject counts it), any other encoder writes it,
// which counts it too.
type encoderProbe struct{ ours, others int }

func (p *encoderProbe) MarshalLogObject(zapcore.ObjectEncoder) error {
	p.others++
	return nil
}

// EncodersWriteRequestLines reports whether every encoder of core is
// switchyard_filter, which writes a request's own fields of its access
// line where no extra log field carries them (RequestLine). core is the
// one Caddy's HTTP app logs through, the tee of every log that may
// write its lines. A core with no encoder reports false.
func EncodersWriteRequestLines(core zapcore.Core) bool {
	p := new(encoderProbe)
	core.With([]zapcore.Field{zap.Object("switchyard_probe", p)})
	return p.ours > 0 && p.others == 0
}

// requestLine is the request's own fields of the access line ent, from
// the request among the With's fields (Caddy's server hands its access
// logger the request that way), when the request left them to the
// encoder; else nil.
func (f *filtering) requestLine(ent zapcore.Entry) zapcore.ObjectMarshaler {
	if RequestLine == nil || !strings.HasPrefix(ent.LoggerName, "http.log.access") {
		return nil
	}
	for i := range f.fields {
		if field := &f.fields[i]; field.Key == "request" && field.Type == zapcore.ObjectMarshalerType {
			if r, ok := field.Interface.(caddyhttp.LoggableHTTPRequest); ok && r.Request != nil {
				return RequestLine(r.Context())
			}
		}
	}
	return nil
}

// extrasAt is where Caddy's access line puts the request's extra log
// fields in the line's fields: after its own, the last of which are
// resp_headers and, when the answer's write failed, write_error
// (caddyhttp.Server's logRequest). -1 for a line without them.
func extrasAt(fields []zapcore.Field) int {
	for i := range fields {
		if fields[i].Key != "resp_headers" {
			continue
		}
		i++
		if i < len(fields) && fields[i].Key == "write_error" {
			i++
		}
		return i
	}
	return -1
}
