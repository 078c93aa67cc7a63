package accesslog

import (
	"time"

	"github.com/caddyserver/caddy/v2/modules/logging"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// collector turns what a line's field adds to an encoder back into
// fields, each through its filter if it has one at the top level: the
// fields a FilterEncoder hands its wrapped encoder in place of the ones
// it was given.
type collector struct {
	level  *filterLevel
	fields []zapcore.Field
}

// filtered appends field through its filter fl. Callers make the field
// of the type zap.Any would choose for their value, without boxing it.
func (c *collector) filtered(fl logging.LogFieldFilter, field zapcore.Field) {
	c.fields = append(c.fields, fl.Filter(field))
}

func (c *collector) AddArray(key string, v zapcore.ArrayMarshaler) error {
	if fl, ok := c.level.filters[key]; ok {
		c.fields = append(c.fields, fl.Filter(zap.Array(key, v)))
		return nil
	}
	c.fields = append(c.fields, zap.Array(key, v))
	return nil
}

func (c *collector) AddObject(key string, v zapcore.ObjectMarshaler) error {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Object(key, v))
		return nil
	}
	if next := c.level.nested[key]; next != nil {
		v = newNestedObject(next, v)
	}
	c.fields = append(c.fields, zap.Object(key, v))
	return nil
}

func (c *collector) AddBinary(key string, v []byte) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Binary(key, v))
		return
	}
	c.fields = append(c.fields, zap.Binary(key, v))
}

func (c *collector) AddByteString(key string, v []byte) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Binary(key, v))
		return
	}
	c.fields = append(c.fields, zap.ByteString(key, v))
}

func (c *collector) AddBool(key string, v bool) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Bool(key, v))
		return
	}
	c.fields = append(c.fields, zap.Bool(key, v))
}

func (c *collector) AddComplex128(key string, v complex128) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Complex128(key, v))
		return
	}
	c.fields = append(c.fields, zap.Complex128(key, v))
}

func (c *collector) AddComplex64(key string, v complex64) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Complex64(key, v))
		return
	}
	c.fields = append(c.fields, zap.Complex64(key, v))
}

func (c *collector) AddDuration(key string, v time.Duration) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Duration(key, v))
		return
	}
	c.fields = append(c.fields, zap.Duration(key, v))
}

func (c *collector) AddFloat64(key string, v float64) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Float64(key, v))
		return
	}
	c.fields = append(c.fields, zap.Float64(key, v))
}

func (c *collector) AddFloat32(key string, v float32) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Float32(key, v))
		return
	}
	c.fields = append(c.fields, zap.Float32(key, v))
}

func (c *collector) AddInt(key string, v int) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Int(key, v))
		return
	}
	c.fields = append(c.fields, zap.Int(key, v))
}

func (c *collector) AddInt64(key string, v int64) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Int64(key, v))
		return
	}
	c.fields = append(c.fields, zap.Int64(key, v))
}

func (c *collector) AddInt32(key string, v int32) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Int32(key, v))
		return
	}
	c.fields = append(c.fields, zap.Int32(key, v))
}

func (c *collector) AddInt16(key string, v int16) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Int16(key, v))
		return
	}
	c.fields = append(c.fields, zap.Int16(key, v))
}

func (c *collector) AddInt8(key string, v int8) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Int8(key, v))
		return
	}
	c.fields = append(c.fields, zap.Int8(key, v))
}

func (c *collector) AddString(key, v string) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.String(key, v))
		return
	}
	c.fields = append(c.fields, zap.String(key, v))
}

func (c *collector) AddTime(key string, v time.Time) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Time(key, v))
		return
	}
	c.fields = append(c.fields, zap.Time(key, v))
}

func (c *collector) AddUint(key string, v uint) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Uint(key, v))
		return
	}
	c.fields = append(c.fields, zap.Uint(key, v))
}

func (c *collector) AddUint64(key string, v uint64) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Uint64(key, v))
		return
	}
	c.fields = append(c.fields, zap.Uint64(key, v))
}

func (c *collector) AddUint32(key string, v uint32) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Uint32(key, v))
		return
	}
	c.fields = append(c.fields, zap.Uint32(key, v))
}

func (c *collector) AddUint16(key string, v uint16) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Uint16(key, v))
		return
	}
	c.fields = append(c.fields, zap.Uint16(key, v))
}

func (c *collector) AddUint8(key string, v uint8) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Uint8(key, v))
		return
	}
	c.fields = append(c.fields, zap.Uint8(key, v))
}

func (c *collector) AddUintptr(key string, v uintptr) {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Uintptr(key, v))
		return
	}
	c.fields = append(c.fields, zap.Uintptr(key, v))
}

func (c *collector) AddReflected(key string, v any) error {
	if fl, ok := c.level.filters[key]; ok {
		c.filtered(fl, zap.Any(key, v))
		return nil
	}
	c.fields = append(c.fields, zap.Reflect(key, v))
	return nil
}

func (c *collector) OpenNamespace(key string) {
	c.fields = append(c.fields, zap.Namespace(key))
}
