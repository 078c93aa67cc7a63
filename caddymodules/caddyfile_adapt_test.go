package caddymodules

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestCaddyfileAdapt adapts each testdata/caddyfile_adapt/*.caddyfiletest
// (a Caddyfile, a line of dashes, the expected JSON), as Caddy's own
// adapter tests do. go test -update rewrites the expected JSON.
func TestCaddyfileAdapt(t *testing.T) {
	files, _ := filepath.Glob("testdata/caddyfile_adapt/*.caddyfiletest")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, ok := strings.Cut(string(raw), "\n----------\n")
			if !ok {
				t.Fatal("no ---------- separator")
			}
			got := adapt(t, input+"\n")
			if *update {
				if err := os.WriteFile(file, []byte(input+"\n----------\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(strings.TrimSpace(want), strings.TrimSpace(got)); diff != "" {
				t.Errorf("adapted JSON differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCaddyfileErrors(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"unknown option", "{\n\tswitchyard {\n\t\tcolour blue\n\t}\n}\n", `unrecognized switchyard option "colour", at Caddyfile:3`},
		{"option without value", "{\n\tswitchyard {\n\t\trevision\n\t}\n}\n", "wrong argument count or unexpected line ending after 'revision'"},
		{"option with two values", "{\n\tswitchyard {\n\t\tpostgres a b\n\t}\n}\n", "wrong argument count or unexpected line ending after 'b'"},
		{"short key secret", "{\n\tswitchyard {\n\t\tkey_secret short\n\t}\n}\n", "key_secret: must be at least 32 characters long (for example: openssl rand -hex 32), at Caddyfile:3"},
		{"short admin secret", ":8080 {\n\tswitchyard_admin {\n\t\tjwt_secret short\n\t}\n}\n", "jwt_secret: must be at least 32 characters long (for example: openssl rand -hex 32), at Caddyfile:3"},
		{"bad cache ttl", "{\n\tswitchyard {\n\t\tkey_cache_ttl soon\n\t}\n}\n", `key_cache_ttl: time: invalid duration "soon"`},
		{"unknown upstream option", "{\n\tswitchyard {\n\t\tupstream http://x/v1 {\n\t\t\ttimeout 1s\n\t\t}\n\t}\n}\n", `unrecognized upstream option "timeout", at Caddyfile:4`},
		{"unknown search option", "{\n\tswitchyard {\n\t\tsearch {\n\t\t\tengine bing\n\t\t}\n\t}\n}\n", `unrecognized search option "engine"`},
		{"open_url allow without prefixes", "{\n\tswitchyard {\n\t\topen_url {\n\t\t\tallow\n\t\t}\n\t}\n}\n", "wrong argument count"},
		{"auth with argument", ":8080 {\n\tswitchyard_auth strict\n}\n", "switchyard_auth takes no arguments"},
		{"error with bad status", ":8080 {\n\tswitchyard_error teapot\n}\n", `bad status "teapot"`},
		{"error with too many args", ":8080 {\n\tswitchyard_error 404 a b c\n}\n", "wrong argument count or unexpected line ending after 'c'"},
		{"limits unknown option", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tspeed 9\n\t\t}\n\t}\n}\n", `unrecognized limits option "speed"`},
		{"limits bad requests", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\trequests ten 1m\n\t\t}\n\t}\n}\n", `requests: want a positive whole number, not "ten"`},
		{"limits requests without period", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\trequests 10\n\t\t}\n\t}\n}\n", "unexpected line ending after '10'"},
		{"limits bad window kind", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\trequests 10 1m sliding\n\t\t}\n\t}\n}\n", `requests: want rolling or rate, not "sliding"`},
		{"limits zero streams", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tstreams 0\n\t\t}\n\t}\n}\n", `streams: want a positive whole number, not "0"`},
		{"limits bad size", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tupload_size lots\n\t\t}\n\t}\n}\n", `upload_size: want a size such as 25MiB or 500MB, not "lots"`},
		{"limits bad policy", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\trate_policy maybe\n\t\t}\n\t}\n}\n", `want fail_open or fail_closed`},
		{"limits bad charge", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tmax_charge -1\n\t\t}\n\t}\n}\n", "max_charge: not a dollar amount"},
		{"limits price with five decimals", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tprice m 0.00001 1\n\t\t}\n\t}\n}\n", "price: not a price: use digits with at most four decimals"},
		{"limits negative ttl", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tlease_ttl -1s\n\t\t}\n\t}\n}\n", "lease_ttl: must be positive"},
		{"limits zero body timeout", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tbody_timeout 0s\n\t\t}\n\t}\n}\n", "body_timeout: must be positive"},
		{"limits bad account body memory", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\taccount_body_memory half\n\t\t}\n\t}\n}\n", `account_body_memory: want a size such as 25MiB or 500MB, not "half"`},
		{"queue without slots", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tqueue\n\t\t}\n\t}\n}\n", "unexpected line ending after 'queue'"},
		{"queue unknown option", "{\n\tswitchyard {\n\t\tlimits {\n\t\t\tqueue 4 {\n\t\t\t\tfair yes\n\t\t\t}\n\t\t}\n\t}\n}\n", `unrecognized queue option "fair", at Caddyfile:5`},
		{"limits directive with args", ":8080 {\n\tswitchyard_limits 5\n}\n", "switchyard_limits takes no arguments; set limits in the switchyard global option"},
		{"chat unknown option", ":8080 {\n\tswitchyard_chat {\n\t\tcolour blue\n\t}\n}\n", `unrecognized switchyard_chat option "colour"`},
		{"chat bad rounds", ":8080 {\n\tswitchyard_chat {\n\t\tmax_rounds many\n\t}\n}\n", "max_rounds:"},
		{"chat bad timeout", ":8080 {\n\tswitchyard_chat {\n\t\tidle_timeout -1s\n\t}\n}\n", `idle_timeout: want a positive duration, not "-1s"`},
		{"proxy bad timeout", ":8080 {\n\tswitchyard_proxy {\n\t\tdial_timeout never\n\t}\n}\n", `dial_timeout: want a positive duration, not "never"`},
		{"ledger zero queue", "{\n\tswitchyard {\n\t\tledger {\n\t\t\tqueue 0\n\t\t}\n\t}\n}\n", `queue: want a positive whole number, not "0"`},
		{"ledger negative delay", "{\n\tswitchyard {\n\t\tledger {\n\t\t\tmax_delay -1s\n\t\t}\n\t}\n}\n", `max_delay: want a duration of 0 or more, not "-1s"`},
		{"model upstream zero weight", "{\n\tswitchyard {\n\t\tmodel m {\n\t\t\tupstream http://x/v1 {\n\t\t\t\tweight 0\n\t\t\t}\n\t\t}\n\t}\n}\n", `weight: want a positive whole number, not "0"`},
		{"model bad health interval", "{\n\tswitchyard {\n\t\tmodel m {\n\t\t\thealth_interval 0s\n\t\t}\n\t}\n}\n", `health_interval: want a positive duration, not "0s"`},
		{"files blobs of another scheme", "{\n\tswitchyard {\n\t\tfiles {\n\t\t\tblobs gs://bucket/files\n\t\t}\n\t}\n}\n", `blobs: want a directory or an s3:// URL, at Caddyfile:4`},
		{"files blobs bucket parameter", "{\n\tswitchyard {\n\t\tfiles {\n\t\t\tblobs s3://files?colour=red\n\t\t}\n\t}\n}\n", `blobs: blob: bucket URL parameter "colour": want one of`},
		{"files blobs bucket endpoint", "{\n\tswitchyard {\n\t\tfiles {\n\t\t\tblobs s3://files?endpoint=ftp://u:secret@minio\n\t\t}\n\t}\n}\n", `blobs: blob: bucket URL parameter endpoint: want http(s)://HOST[:PORT], without credentials or a path, at Caddyfile:4`},
		{"files clamd address", "{\n\tswitchyard {\n\t\tfiles {\n\t\t\tclamd http://clamd:3310\n\t\t}\n\t}\n}\n", `clamd: `},
		{"files scan policy", "{\n\tswitchyard {\n\t\tfiles {\n\t\t\tscan_policy maybe\n\t\t}\n\t}\n}\n", `scan_policy: "maybe": want fail_closed or fail_open, at Caddyfile:4`},
		{"files bad janitor interval", "{\n\tswitchyard {\n\t\tfiles {\n\t\t\tjanitor_interval soon\n\t\t}\n\t}\n}\n", `janitor_interval: want a positive duration, not "soon"`},
		{"tools unknown option", "{\n\tswitchyard {\n\t\ttools {\n\t\t\tparallel 3\n\t\t}\n\t}\n}\n", `unrecognized tools option "parallel"`},
		{"tools with argument", "{\n\tswitchyard {\n\t\ttools 3\n\t}\n}\n", "wrong argument count"},
		{"tools zero calls", "{\n\tswitchyard {\n\t\ttools {\n\t\t\tmax_tool_calls 0\n\t\t}\n\t}\n}\n", `max_tool_calls: want a positive whole number, not "0"`},
		{"tools bad concurrency", "{\n\tswitchyard {\n\t\ttools {\n\t\t\trender_concurrency many\n\t\t}\n\t}\n}\n", `render_concurrency: want a positive whole number, not "many"`},
		{"meter with argument", ":8080 {\n\tswitchyard_meter on\n}\n", "switchyard_meter takes no arguments"},
		{"admin with argument", ":8080 {\n\tswitchyard_admin on\n}\n", "wrong argument count"},
		{"chain without handlers", ":8080 {\n\tswitchyard_chain /v3/*\n}\n", "switchyard_chain needs a block with its handlers"},
		{"chain with argument", ":8080 {\n\tswitchyard_chain /v3/* twice {\n\t\tswitchyard_auth\n\t}\n}\n", "wrong argument count"},
		{"chain handler with matcher", ":8080 {\n\tswitchyard_chain /v3/* {\n\t\tswitchyard_auth\n\t\tswitchyard_models /v3/models\n\t}\n}\n", "switchyard_chain: switchyard_models takes no matcher of its own; the chain's matcher is every handler's, at Caddyfile:4"},
		{"chain handler with named matcher", ":8080 {\n\t@m path /v3/models\n\tswitchyard_chain /v3/* {\n\t\tswitchyard_models @m\n\t}\n}\n", "takes no matcher of its own"},
		{"chain of no handler", ":8080 {\n\tswitchyard_chain {\n\t\tswitchyard_teapot\n\t}\n}\n", `switchyard_chain: "switchyard_teapot" is not an HTTP handler, at Caddyfile:3`},
		{"chain handler's own error", ":8080 {\n\tswitchyard_chain {\n\t\tswitchyard_error teapot\n\t}\n}\n", `bad status "teapot"`},
		{"admin unknown option", ":8080 {\n\tswitchyard_admin {\n\t\tsecret x\n\t}\n}\n", `unrecognized switchyard_admin option "secret"`},
		{"admin option without value", ":8080 {\n\tswitchyard_admin {\n\t\tissuer\n\t}\n}\n", "wrong argument count"},
		// Values refused when the Caddyfile is adapted, at their line,
		// rather than when the server starts.
		{"unknown revision", "{\n\tswitchyard {\n\t\trevision C\n\t}\n}\n", `revision: unknown spec revision "C": want A or B, at Caddyfile:3`},
		{"unknown redis mode", "{\n\tswitchyard {\n\t\tredis_mode ring\n\t}\n}\n", `redis_mode: redis mode "ring": want single, cluster or sentinel, at Caddyfile:3`},
		{"postgres without scheme", "{\n\tswitchyard {\n\t\tpostgres db.internal/switchyard\n\t}\n}\n", "postgres: want a postgres, postgresql URL such as postgres://user@host:5432/db, or keyword=value pairs (host=... dbname=...), at Caddyfile:3"},
		{"postgres other scheme", "{\n\tswitchyard {\n\t\tpostgres mysql://u:secret@db/x\n\t}\n}\n", "postgres: want a postgres, postgresql URL"},
		{"redis without scheme", "{\n\tswitchyard {\n\t\tredis localhost:6379\n\t}\n}\n", "redis: want a redis, rediss, unix URL such as redis://host:6379/0, at Caddyfile:3"},
		{"upstream without scheme", "{\n\tswitchyard {\n\t\tupstream localhost:8000/v1\n\t}\n}\n", "upstream: want a http, https URL such as http://127.0.0.1:8000/v1, at Caddyfile:3"},
		{"upstream without host", "{\n\tswitchyard {\n\t\tupstream http:///v1\n\t}\n}\n", "upstream: want a http, https URL"},
		{"search url without scheme", "{\n\tswitchyard {\n\t\tsearch searx.internal\n\t}\n}\n", "search: want a http, https URL such as http://127.0.0.1:8888, at Caddyfile:3"},
		{"searxng option without scheme", "{\n\tswitchyard {\n\t\tsearch {\n\t\t\tsearxng searx.internal\n\t\t}\n\t}\n}\n", "searxng: want a http, https URL such as http://127.0.0.1:8888, at Caddyfile:4"},
		{"open_url allow not a prefix", "{\n\tswitchyard {\n\t\topen_url {\n\t\t\tallow 10.0.0.0/33\n\t\t}\n\t}\n}\n", `allow: open_url allow-list: "10.0.0.0/33" is not an IP prefix such as 10.0.0.0/8, at Caddyfile:4`},
		{"model upstream without scheme", "{\n\tswitchyard {\n\t\tmodel m {\n\t\t\tupstream 10.0.0.7:8000/v1\n\t\t}\n\t}\n}\n", "upstream: want a http, https URL such as http://10.0.0.7:8000/v1, at Caddyfile:4"},
		{"model unknown lb_policy", "{\n\tswitchyard {\n\t\tmodel m {\n\t\t\tlb_policy best\n\t\t}\n\t}\n}\n", `lb_policy "best": want one of`},
		{"model relative health_path", "{\n\tswitchyard {\n\t\tmodel m {\n\t\t\thealth_path health\n\t\t}\n\t}\n}\n", `health_path "health": want a path starting with /, or off, at Caddyfile:4`},
		{"admin jwks_url without scheme", ":8080 {\n\tswitchyard_admin {\n\t\tjwks_url sso.example.com/jwks\n\t}\n}\n", "jwks_url: want a https, http URL such as https://sso.example.com/.well-known/jwks.json, at Caddyfile:3"},
		{"stripe api_url without scheme", ":8080 {\n\tswitchyard_admin {\n\t\tpayments {\n\t\t\tstripe {\n\t\t\t\tapi_url localhost:12111\n\t\t\t}\n\t\t}\n\t}\n}\n", "api_url: want a http, https URL such as https://api.stripe.com, at Caddyfile:5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adapter := caddyconfig.GetAdapter("caddyfile")
			_, _, err := adapter.Adapt([]byte(tt.input), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestCaddyfileCheckedValues: the values the checks above refuse are
// taken when they are right, or placeholders known only at run time, and
// a refused database URL is not repeated in the error, since it may hold
// a password.
func TestCaddyfileCheckedValues(t *testing.T) {
	for _, opt := range []string{
		"revision a", "revision {env.REV}", "redis_mode cluster", "redis_mode {env.MODE}",
		"postgres postgres://u@db:5432/x?sslmode=require", "postgres postgresql://db/x", "postgres \"host=db dbname=x\"",
		"postgres {env.PG}", "redis rediss://:pw@r:6380/1", "redis unix:///run/redis.sock", "redis {env.REDIS}",
		"upstream https://api.example.com/v1", "upstream {env.UP}", "search http://searx:8888",
		"open_url {\n\t\t\tallow 10.0.0.0/8 fd12::/48 192.0.2.7\n\t\t}",
	} {
		in := "{\n\tswitchyard {\n\t\t" + opt + "\n\t}\n}\n"
		if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(in), nil); err != nil {
			t.Errorf("%s: %v", opt, err)
		}
	}
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte("{\n\tswitchyard {\n\t\tpostgres mysql://u:hunter2@db/x\n\t}\n}\n"), nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v: want a refusal that does not repeat the URL", err)
	}
}

func adapt(t *testing.T, input string) string {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, warnings, err := adapter.Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapting: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("warning: %s", w.String())
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "\t"); err != nil {
		t.Fatal(err)
	}
	return buf.String() + "\n"
}

// TestCaddyfileExample keeps the shipped Caddyfile.example and its adapted
// form (testdata/Caddyfile.example.json) in step, defaults applied.
func TestCaddyfileExample(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "SWITCHYARD_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	raw, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	got := adapt(t, string(raw))
	const golden = "testdata/Caddyfile.example.json"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("Caddyfile.example adapts differently (-want +got):\n%s", diff)
	}
}
