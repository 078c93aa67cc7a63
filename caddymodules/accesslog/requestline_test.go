package accesslog

import (
	"io"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The probe tells a core whose every encoder is switchyard_filter from
// one with any other encoder beside it, or with none.
func TestEncodersWriteRequestLines(t *testing.T) {
	caddys, ours := provisionedEncoders(t, exampleFormat)
	core := func(enc zapcore.Encoder) zapcore.Core {
		return zapcore.NewCore(enc, zapcore.AddSync(io.Discard), zapcore.DebugLevel)
	}
	json := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	for _, c := range []struct {
		name string
		core zapcore.Core
		want bool
	}{
		{"switchyard_filter", core(ours), true},
		{"two of them", zapcore.NewTee(core(ours), core(ours.Clone())), true},
		{"beside Caddy's filter", zapcore.NewTee(core(ours), core(caddys)), false},
		{"beside json", zapcore.NewTee(core(json), core(ours)), false},
		{"no encoder", zapcore.NewNopCore(), false},
	} {
		if got := EncodersWriteRequestLines(c.core); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
