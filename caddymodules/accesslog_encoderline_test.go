package caddymodules

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// When every log that may write an access line encodes with
// switchyard_filter, a request's own fields of its line are not put
// into Caddy's extra log fields, and the encoder writes them: the line
// is the one Caddy writes from the extra fields, field for field and in
// its order, whatever other extra fields the request has (log_append's,
// set before the handlers or after them). A json log beside the access
// log makes the requests put their fields into the extra fields.
func TestAccessLineByTheEncoderIsCaddys(t *testing.T) {
	discardStderr(t)
	up := drainingUpstream(t)
	for _, c := range []struct{ name, site string }{
		{"alone", ""},
		{"a field set after the handlers", "\tlog_append late_field late\n"},
		{"fields set before and after", "\tlog_append <early_field early\n\tlog_append late_field late\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			byEncoder := v1AccessLine(t, up, c.site, false)
			inExtra := v1AccessLine(t, up, c.site, true)
			if byEncoder != inExtra {
				t.Errorf("the encoder's line\n%s\nCaddy's from the extra fields\n%s", byEncoder, inExtra)
			}
			if !strings.Contains(byEncoder, `request_id="req-line-1"`) {
				t.Errorf("the line has not the request's fields: %s", byEncoder)
			}
		})
	}
}

// v1AccessLine serves a /v1 request through Caddyfile.example, with the
// site directives site added and its access log written to a file, and
// returns the request's access line, its fields in order with the
// values that differ from one load to the next left out. jsonBeside
// adds a log with Caddy's json encoder, which the access lines also go
// to.
func v1AccessLine(t *testing.T, upAddr, site string, jsonBeside bool) string {
	t.Helper()
	plainPort := setV1BenchEnv(t, upAddr)
	raw, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	example := string(raw)
	dir := t.TempDir()
	file := filepath.Join(dir, "access.log")
	i := strings.Index(example, "\t\toutput switchyard_buffered {")
	j := strings.Index(example, "\t\tformat switchyard_filter {")
	if i < 0 || j < i {
		t.Fatal("Caddyfile.example's access log has no switchyard_buffered output before its format")
	}
	example = example[:i] + "\t\toutput file " + file + "\n" + example[j:]
	if jsonBeside {
		// Not discarded: Caddy gives a log that discards no encoder.
		site += "\tlog json_beside {\n\t\toutput file " + filepath.Join(dir, "json.log") + "\n\t\tformat json\n\t}\n"
	}
	bind := "\tbind {$SWITCHYARD_LISTEN:127.0.0.1:8080}\n"
	if !strings.Contains(example, bind) {
		t.Fatal("Caddyfile.example's site has no bind line to add directives after")
	}
	example = strings.Replace(example, bind, bind+site, 1)
	_, gateway := loadV1BenchConfig(t, example, benchLimits, upAddr, plainPort)
	app, err := caddy.ActiveContext().App("switchyard")
	if err != nil {
		t.Fatal(err)
	}
	if got := app.(*App).encoderLines; got == jsonBeside {
		t.Fatalf("encoderLines = %v with a json log beside: %v", got, jsonBeside)
	}
	key := fundedKey(t, "line")
	r := benchRequest()
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("X-Request-Id", "req-line-1")
	w := &benchWriter{header: make(http.Header)}
	if gateway.ServeHTTP(w, r); w.status != http.StatusOK {
		t.Fatalf("status %d", w.status)
	}
	var line []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out, _ := os.ReadFile(file)
		for l := range bytes.Lines(out) {
			if bytes.Contains(l, []byte(`"req-line-1"`)) {
				line = l
			}
		}
		if line != nil {
			break
		}
	}
	if line == nil {
		t.Fatal("no access line for the request")
	}
	return stableFields(t, line)
}

// stableFields is a JSON line's top-level members in order, each with
// its value unless it differs from one load of the config to the next
// (times, ids made by the store, the answer's headers, which carry
// them).
func stableFields(t *testing.T, line []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	var b strings.Builder
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		name := tok.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		switch name {
		case "ts", "duration", "charge_id", "key_id", "account_id", "resp_headers":
			b.WriteString(name + " ")
		default:
			b.WriteString(name + "=" + string(v) + " ")
		}
	}
	return b.String()
}
