package accesslog

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

func init() {
	caddy.RegisterModule(FilterEncoder{})
}

// FilterEncoder is a log encoder (`switchyard_filter`) that takes Caddy's
// `filter` encoder's configuration and writes the same lines, at less
// cost per line. Caddy's looks every field up among the filters under a
// key built anew for it, boxes every value it is handed to do so, and
// clones the wrapped encoder for every line without giving the clone
// back; on the gateway's access log that made about a third of the
// objects a line cost. This one keeps the filters in a tree by nesting
// level, looks a field up by its own key, boxes a value only for the
// filter that takes it, and hands the wrapped encoder the line's fields
// as they are, the filtered ones replaced. Syntax, as `filter`'s:
//
//	switchyard_filter {
//	    wrap <another encoder>
//	    <field> <filter> {
//	        <filter options>
//	    }
//	}
//
// As with `filter`, elements of arrays are not filtered, nor are ts,
// level, logger and msg.
type FilterEncoder struct {
	// The encoder that writes the lines; json by default, console when
	// the output is a terminal.
	WrappedRaw json.RawMessage `json:"wrap,omitempty" caddy:"namespace=caddy.logging.encoders inline_key=format"`

	// The filters by field name; `a>b` names the field b of the object
	// in field a.
	FieldsRaw map[string]json.RawMessage `json:"fields,omitempty" caddy:"namespace=caddy.logging.encoders.filter inline_key=filter"`

	filtering

	wrappedIsDefault bool
	ctx              caddy.Context
}

// CaddyModule returns the Caddy module information.
func (FilterEncoder) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.encoders.switchyard_filter",
		New: func() caddy.Module { return new(FilterEncoder) },
	}
}

// UnmarshalCaddyfile reads the configuration as Caddy's filter encoder
// does, regexp filters on one field merged included.
func (fe *FilterEncoder) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	var caddys logging.FilterEncoder
	if err := caddys.UnmarshalCaddyfile(d); err != nil {
		return err
	}
	fe.WrappedRaw, fe.FieldsRaw = caddys.WrappedRaw, caddys.FieldsRaw
	return nil
}

// Provision loads the wrapped encoder and the filters.
func (fe *FilterEncoder) Provision(ctx caddy.Context) error {
	fe.ctx = ctx
	var wrapped zapcore.Encoder
	if fe.WrappedRaw == nil {
		wrapped = &logging.JSONEncoder{}
		if err := wrapped.(caddy.Provisioner).Provision(ctx); err != nil {
			return fmt.Errorf("provisioning fallback encoder module: %v", err)
		}
		fe.wrappedIsDefault = true
	} else {
		val, err := ctx.LoadModule(fe, "WrappedRaw")
		if err != nil {
			return fmt.Errorf("loading fallback encoder module: %v", err)
		}
		wrapped = val.(zapcore.Encoder)
	}
	vals, err := ctx.LoadModule(fe, "FieldsRaw")
	if err != nil {
		return fmt.Errorf("loading log filter modules: %v", err)
	}
	level := new(filterLevel)
	for name, filter := range vals.(map[string]any) {
		level.add(strings.Split(name, ">"), filter.(logging.LogFieldFilter))
	}
	fe.filtering = newFiltering(wrapped, level)
	return nil
}

// ConfigureDefaultFormat writes to a terminal in the console format
// when no encoder was named, as Caddy's filter encoder does.
func (fe *FilterEncoder) ConfigureDefaultFormat(wo caddy.WriterOpener) error {
	if !fe.wrappedIsDefault {
		if cfd, ok := fe.wrapped.(caddy.ConfiguresFormatterDefault); ok {
			return cfd.ConfigureDefaultFormat(wo)
		}
		return nil
	}
	if caddy.IsWriterStandardStream(wo) && term.IsTerminal(int(os.Stderr.Fd())) {
		console := &logging.ConsoleEncoder{}
		if err := console.Provision(fe.ctx); err != nil {
			return fmt.Errorf("provisioning fallback encoder module: %v", err)
		}
		fe.filtering = newFiltering(console, fe.level)
	}
	return nil
}

// filterLevel holds the filters of one level of nesting: on the fields
// named here, and on fields of the objects named here.
type filterLevel struct {
	filters map[string]logging.LogFieldFilter
	nested  map[string]*filterLevel
}

func (l *filterLevel) add(path []string, filter logging.LogFieldFilter) {
	if len(path) == 1 {
		if l.filters == nil {
			l.filters = make(map[string]logging.LogFieldFilter)
		}
		l.filters[path[0]] = filter
		return
	}
	next := l.nested[path[0]]
	if next == nil {
		if l.nested == nil {
			l.nested = make(map[string]*filterLevel)
		}
		next = new(filterLevel)
		l.nested[path[0]] = next
	}
	next.add(path[1:], filter)
}

// touches reports whether a field named key is filtered, or has fields
// that are.
func (l *filterLevel) touches(key string) bool {
	if _, ok := l.filters[key]; ok {
		return true
	}
	_, ok := l.nested[key]
	return ok
}

// filtering is the zapcore.Encoder the logger works with. What a
// logger's With adds to it is kept as fields, as they were given, and
// filtered and encoded with each line it writes. Caddy's HTTP server
// hands its access and error loggers the request by With on every
// request, and so every log whose lines those loggers may write, the
// default log among them: a log that then writes no line for the
// request (the default log excludes access lines) spends nothing on it,
// where an encoder that encodes on With would write the whole request,
// headers and all, into a buffer that is thrown away.
type filtering struct {
	collector // the fields of the logger's With, unfiltered
	level     *filterLevel
	wrapped   zapcore.Encoder

	// first holds the With's fields when the logger it was cloned from
	// had none, as Caddy's loggers have, without an allocation of their
	// own: the request, which Caddy's server hands its loggers, and the
	// upstream, the round trip's duration and the request, which
	// reverse_proxy hands its logger on every request (eagerly, for a
	// debug line a log at info drops). Room for one grew the list twice
	// for those three: 384 bytes in two allocations, where the room for
	// two more is 128 bytes in each clone's size class.
	first [3]zapcore.Field
}

// unfiltered is the level of a With's fields, which are filtered when a
// line is encoded.
var unfiltered = new(filterLevel)

func newFiltering(wrapped zapcore.Encoder, level *filterLevel) filtering {
	return filtering{collector: collector{level: unfiltered}, level: level, wrapped: wrapped}
}

// Clone shares the wrapped encoder: nothing is ever added to it, and
// encoding a line only reads it.
func (f *filtering) Clone() zapcore.Encoder {
	c := &filtering{collector: collector{level: unfiltered, fields: slices.Clip(f.fields)}, level: f.level, wrapped: f.wrapped}
	if len(f.fields) == 0 {
		c.fields = c.first[:0]
	}
	return c
}

func (f *filtering) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	if len(f.fields) == 0 && !slices.ContainsFunc(fields, f.touches) {
		return f.wrapped.EncodeEntry(ent, fields)
	}
	// The wrapped encoder is handed the With's fields and then the
	// line's, as zap writes them, each filtered one replaced by what its
	// filter made of it: a field adds itself to an encoder through one
	// or more calls, and each call becomes a field again on the way
	// through.
	c := lineCollectors.Get().(*collector)
	c.level = f.level
	c.addFiltered(f.fields)
	c.addFiltered(fields)
	buf, err := f.wrapped.EncodeEntry(ent, c.fields)
	clear(c.fields)
	c.fields, c.level = c.fields[:0], nil
	lineCollectors.Put(c)
	return buf, err
}

// touches reports whether field is filtered, or has fields that are.
func (f *filtering) touches(field zapcore.Field) bool { return f.level.touches(field.Key) }

// addFiltered appends fields, each filtered one through its filter.
func (c *collector) addFiltered(fields []zapcore.Field) {
	for _, field := range fields {
		if !c.level.touches(field.Key) {
			c.fields = append(c.fields, field)
			continue
		}
		field.AddTo(c)
	}
}

// lineCollectors collect the fields handed to wrapped encoders, kept
// from one line to the next with their lists: the wrapped encoder has
// written the fields when its EncodeEntry returns, and a line's fields
// are a dozen or more. The collector itself is kept too: the filters
// and the fields' AddTo take it as an encoder, an interface, which put
// one made for the line on the heap.
var lineCollectors = sync.Pool{New: func() any { return new(collector) }}

// filterTo writes field to enc through its filter fl.
func filterTo(enc zapcore.ObjectEncoder, fl logging.LogFieldFilter, field zapcore.Field) {
	fl.Filter(field).AddTo(enc)
}

func addArray(enc zapcore.ObjectEncoder, l *filterLevel, key string, v zapcore.ArrayMarshaler) error {
	if fl, ok := l.filters[key]; ok {
		fl.Filter(zap.Array(key, v)).AddTo(enc)
		return nil
	}
	return enc.AddArray(key, v)
}

func addObject(enc zapcore.ObjectEncoder, l *filterLevel, key string, v zapcore.ObjectMarshaler) error {
	if fl, ok := l.filters[key]; ok {
		filterTo(enc, fl, zap.Object(key, v))
		return nil
	}
	if next := l.nested[key]; next != nil {
		return enc.AddObject(key, newNestedObject(next, v))
	}
	return enc.AddObject(key, v)
}

// nestedObject is an object with filters on its fields: it marshals
// itself through them, with the encoder it holds (nestedEncoder), one
// allocation where the object boxed and its encoder were two.
type nestedObject struct {
	level  *filterLevel
	object zapcore.ObjectMarshaler
	enc    nestedEncoder
}

func newNestedObject(level *filterLevel, object zapcore.ObjectMarshaler) *nestedObject {
	return &nestedObject{level: level, object: object}
}

// MarshalLogObject writes the object to enc through the filters. An
// object is written by the encoder of one line, once.
func (o *nestedObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	o.enc = nestedEncoder{out: enc, level: o.level}
	return o.object.MarshalLogObject(&o.enc)
}

// nestedEncoder filters the fields of one nested object on their way to
// the encoder writing it.
type nestedEncoder struct {
	out   zapcore.ObjectEncoder
	level *filterLevel
}

func (e *nestedEncoder) AddArray(key string, v zapcore.ArrayMarshaler) error {
	return addArray(e.out, e.level, key, v)
}

func (e *nestedEncoder) AddObject(key string, v zapcore.ObjectMarshaler) error {
	return addObject(e.out, e.level, key, v)
}

func (e *nestedEncoder) AddBinary(key string, v []byte) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Binary(key, v))
		return
	}
	e.out.AddBinary(key, v)
}

func (e *nestedEncoder) AddByteString(key string, v []byte) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Binary(key, v))
		return
	}
	e.out.AddByteString(key, v)
}

func (e *nestedEncoder) AddBool(key string, v bool) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Bool(key, v))
		return
	}
	e.out.AddBool(key, v)
}

func (e *nestedEncoder) AddComplex128(key string, v complex128) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Complex128(key, v))
		return
	}
	e.out.AddComplex128(key, v)
}

func (e *nestedEncoder) AddComplex64(key string, v complex64) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Complex64(key, v))
		return
	}
	e.out.AddComplex64(key, v)
}

func (e *nestedEncoder) AddDuration(key string, v time.Duration) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Duration(key, v))
		return
	}
	e.out.AddDuration(key, v)
}

func (e *nestedEncoder) AddFloat64(key string, v float64) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Float64(key, v))
		return
	}
	e.out.AddFloat64(key, v)
}

func (e *nestedEncoder) AddFloat32(key string, v float32) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Float32(key, v))
		return
	}
	e.out.AddFloat32(key, v)
}

func (e *nestedEncoder) AddInt(key string, v int) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Int(key, v))
		return
	}
	e.out.AddInt(key, v)
}

func (e *nestedEncoder) AddInt64(key string, v int64) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Int64(key, v))
		return
	}
	e.out.AddInt64(key, v)
}

func (e *nestedEncoder) AddInt32(key string, v int32) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Int32(key, v))
		return
	}
	e.out.AddInt32(key, v)
}

func (e *nestedEncoder) AddInt16(key string, v int16) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Int16(key, v))
		return
	}
	e.out.AddInt16(key, v)
}

func (e *nestedEncoder) AddInt8(key string, v int8) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Int8(key, v))
		return
	}
	e.out.AddInt8(key, v)
}

func (e *nestedEncoder) AddString(key, v string) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.String(key, v))
		return
	}
	e.out.AddString(key, v)
}

func (e *nestedEncoder) AddTime(key string, v time.Time) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Time(key, v))
		return
	}
	e.out.AddTime(key, v)
}

func (e *nestedEncoder) AddUint(key string, v uint) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Uint(key, v))
		return
	}
	e.out.AddUint(key, v)
}

func (e *nestedEncoder) AddUint64(key string, v uint64) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Uint64(key, v))
		return
	}
	e.out.AddUint64(key, v)
}

func (e *nestedEncoder) AddUint32(key string, v uint32) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Uint32(key, v))
		return
	}
	e.out.AddUint32(key, v)
}

func (e *nestedEncoder) AddUint16(key string, v uint16) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Uint16(key, v))
		return
	}
	e.out.AddUint16(key, v)
}

func (e *nestedEncoder) AddUint8(key string, v uint8) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Uint8(key, v))
		return
	}
	e.out.AddUint8(key, v)
}

func (e *nestedEncoder) AddUintptr(key string, v uintptr) {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Uintptr(key, v))
		return
	}
	e.out.AddUintptr(key, v)
}

func (e *nestedEncoder) AddReflected(key string, v any) error {
	if fl, ok := e.level.filters[key]; ok {
		filterTo(e.out, fl, zap.Any(key, v))
		return nil
	}
	return e.out.AddReflected(key, v)
}

func (e *nestedEncoder) OpenNamespace(key string) { e.out.OpenNamespace(key) }

// Interface guards
var (
	_ zapcore.Encoder                  = (*FilterEncoder)(nil)
	_ caddy.Provisioner                = (*FilterEncoder)(nil)
	_ caddyfile.Unmarshaler            = (*FilterEncoder)(nil)
	_ caddy.ConfiguresFormatterDefault = (*FilterEncoder)(nil)
)
