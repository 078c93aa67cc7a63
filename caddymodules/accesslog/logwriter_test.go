package accesslog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestBufferedWriterCaddyfile(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{in: "switchyard_buffered", want: `{}`},
		{in: "switchyard_buffered {\n\tto stderr\n\tflush_size 32KiB\n\tflush_interval 250ms\n}",
			want: `{"to":{"output":"stderr"},"flush_size":32768,"flush_interval":250000000}`},
		{in: "switchyard_buffered {\n\tto file /var/log/access.log {\n\t\troll_size 1MiB\n\t}\n}",
			want: `{"to":{"filename":"/var/log/access.log","output":"file","roll_size_mb":1}}`},
		{in: "switchyard_buffered stderr", err: "wrong argument count"},
		{in: "switchyard_buffered {\n\tto stderr now\n}", err: "wrong argument count"},
		{in: "switchyard_buffered {\n\tto switchyard_buffered\n}", err: "cannot write to another"},
		{in: "switchyard_buffered {\n\tflush_size lots\n}", err: "flush_size: want a size"},
		{in: "switchyard_buffered {\n\tflush_interval 0s\n}", err: "flush_interval: want a duration"},
		{in: "switchyard_buffered {\n\tcolour blue\n}", err: `unrecognized switchyard_buffered option "colour"`},
	} {
		var bw BufferedWriter
		err := bw.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		js, _ := json.Marshal(bw)
		if string(js) != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.in, js, tt.want)
		}
	}
}
