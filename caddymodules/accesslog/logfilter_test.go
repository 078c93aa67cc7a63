package accesslog

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// regexpURIFilter and regexpHostFilter are the filters Caddyfile.example
// used on the access log's request>uri and request>host before
// switchyard_trim: Caddy's own modules, provisioned as Caddy does.
func regexpURIFilter(tb testing.TB) logging.LogFieldFilter {
	f := &logging.MultiRegexpFilter{}
	if err := f.AddOperation(`[?].*`, ""); err != nil {
		tb.Fatal(err)
	}
	if err := f.AddOperation(`^(.{256}).+$`, "$1…"); err != nil {
		tb.Fatal(err)
	}
	if err := f.Provision(caddy.Context{}); err != nil {
		tb.Fatal(err)
	}
	return f
}

func regexpHostFilter(tb testing.TB) logging.LogFieldFilter {
	f := &logging.RegexpFilter{RawRegexp: `^(.{256}).+$`, Value: "$1…"}
	if err := f.Provision(caddy.Context{}); err != nil {
		tb.Fatal(err)
	}
	return f
}

// trimCases are request URIs and hosts around the 256-character cut:
// short and long, ASCII and not, with and without a query, with bytes
// that are not UTF-8 and with newlines, which the regexps treat apart.
func trimCases() []string {
	cases := []string{
		"", "/", "/v1/chat/completions", "/v1/models?api_key=sk-secret", "?", "??", "/a?b?c",
		"example.com", "127.0.0.1:8080", "[::1]:8080", "bücher.example:443", "例え.テスト",
		"/v1/files/%E4%BE%8B?x=1", "/v1/\xff\xfe?k=v", "\xff", "a\nb", "/a?b\nc?d\ne", "?\n?", "\n",
	}
	for _, unit := range []string{"a", "é", "例", "😀", "\xff", "a?"} {
		for _, n := range []int{255, 256, 257, 300, 1000} {
			s := strings.Repeat(unit, n)
			cases = append(cases, s, "/"+s, s+"?q=sk-"+s, s+"\n", "/v1?"+s)
		}
	}
	long := strings.Repeat("/segment", 64)
	cases = append(cases, long, long+"?api_key=sk-x", "例"+long[:255], long[:255]+"例", long[:255]+"\xff", long[:256]+"\n")
	return cases
}

func TestTrimFilterMatchesRegexpFilters(t *testing.T) {
	uri := &TrimFilter{DropQuery: true, MaxChars: 256}
	host := &TrimFilter{MaxChars: 256}
	oldURI, oldHost := regexpURIFilter(t), regexpHostFilter(t)
	for _, s := range trimCases() {
		if got, want := uri.Filter(zap.String("uri", s)), oldURI.Filter(zap.String("uri", s)); got != want {
			t.Errorf("uri %q:\n got %q\nwant %q", s, got.String, want.String)
		}
		if got, want := host.Filter(zap.String("host", s)), oldHost.Filter(zap.String("host", s)); got != want {
			t.Errorf("host %q:\n got %q\nwant %q", s, got.String, want.String)
		}
	}
}

// FuzzTrimFilterMatchesRegexpFilters runs the comparison above on any
// input (go test -fuzz FuzzTrimFilter ./caddymodules).
func FuzzTrimFilterMatchesRegexpFilters(f *testing.F) {
	for _, s := range trimCases() {
		f.Add(s)
	}
	uri := &TrimFilter{DropQuery: true, MaxChars: 256}
	host := &TrimFilter{MaxChars: 256}
	oldURI, oldHost := regexpURIFilter(f), regexpHostFilter(f)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := uri.Filter(zap.String("uri", s)), oldURI.Filter(zap.String("uri", s)); got != want {
			t.Errorf("uri %q:\n got %q\nwant %q", s, got.String, want.String)
		}
		if got, want := host.Filter(zap.String("host", s)), oldHost.Filter(zap.String("host", s)); got != want {
			t.Errorf("host %q:\n got %q\nwant %q", s, got.String, want.String)
		}
	})
}

func TestTrimFilterDropsFieldsThatAreNotStrings(t *testing.T) {
	f := &TrimFilter{DropQuery: true, MaxChars: 256}
	for _, in := range []zapcore.Field{zap.Int("uri", 3), zap.Strings("uri", []string{"/a?key=sk-x"}), zap.ByteString("uri", []byte("/a?key=sk-x"))} {
		if got := f.Filter(in); got.Type != zapcore.SkipType {
			t.Errorf("%v: type %v, want it skipped", in, got.Type)
		}
	}
}

func TestTrimFilterCaddyfile(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want TrimFilter
		err  string
	}{
		{in: "switchyard_trim {\n\tdrop_query\n\tmax_chars 256\n}", want: TrimFilter{DropQuery: true, MaxChars: 256}},
		{in: "switchyard_trim {\n\tmax_chars 64\n}", want: TrimFilter{MaxChars: 64}},
		{in: "switchyard_trim {\n\tdrop_query\n}", want: TrimFilter{DropQuery: true}},
		{in: "switchyard_trim 256", err: "wrong argument count"},
		{in: "switchyard_trim {\n\tmax_chars 0\n}", err: "max_chars: want a positive whole number"},
		{in: "switchyard_trim {\n\tmax_chars lots\n}", err: "max_chars: want a positive whole number"},
		{in: "switchyard_trim {\n\tmax_chars\n}", err: "wrong argument count"},
		{in: "switchyard_trim {\n\tdrop_query yes\n}", err: "wrong argument count"},
		{in: "switchyard_trim {\n\tcut 3\n}", err: `unrecognized switchyard_trim option "cut"`},
	} {
		var got TrimFilter
		err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if err := (&TrimFilter{}).Validate(); err == nil {
		t.Error("a filter that does nothing is valid")
	}
}
