package limits

import (
	"errors"
	"testing"
	"time"
)

func TestSetOption(t *testing.T) {
	var c Config
	for _, o := range [][]string{
		{"requests", "10", "1m", "rate"}, {"streams", "3"}, {"upload_size", "2MiB"}, {"body_timeout", "1d"},
		{"price", "m", "0.075", "1"}, {"auth_failures", "off"}, {"system_chars", "0"},
	} {
		if err := c.SetOption(o[0], o[1:]); err != nil {
			t.Fatalf("%v: %v", o, err)
		}
	}
	if c.Requests != 10 || time.Duration(c.RequestsPeriod) != time.Minute || c.Rolling == nil || *c.Rolling ||
		c.Streams != 3 || c.MaxUploadBytes != 2<<20 || time.Duration(c.BodyTimeout) != 24*time.Hour ||
		c.Prices["m"].InputPerMTok != 750 || c.AuthFailures == nil || *c.AuthFailures != 0 ||
		c.MaxSystemChars == nil || *c.MaxSystemChars != 0 {
		t.Errorf("options read as %+v", c)
	}
	for _, tt := range []struct {
		opt  string
		args []string
		want error
	}{
		{"speed", []string{"9"}, ErrUnknownOption},
		{"max_charge", []string{"5"}, ErrUnknownOption}, // the adapter's
		{"requests", []string{"10"}, ErrArgCount},
		{"streams", nil, ErrArgCount},
	} {
		if err := new(Config).SetOption(tt.opt, tt.args); !errors.Is(err, tt.want) {
			t.Errorf("%s %v: %v, want %v", tt.opt, tt.args, err, tt.want)
		}
	}
	if err := c.SetOption("price", []string{"m", "1", "1"}); err == nil {
		t.Error("a model priced twice passed")
	}
}
