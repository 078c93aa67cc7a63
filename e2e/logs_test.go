package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// accessLog is the access log docs/operations.md recommends: Caddy
// redacts Authorization, Proxy-Authorization and cookies by itself, but
// a client may put its key in any header or in the query, so the filter
// drops request headers and the query from what is logged.
const accessLog = `	log {
		format filter {
			request>headers delete
			request>uri regexp [?].* ""
		}
	}
`

// TestLogsCarryNoKeyOrPrompt runs a gateway at debug level with the
// recommended access log on, sends a key in every header a client might put one in
// (and in the query), a prompt, and a stream the upstream cuts (Caddy
// logs the aborted response), and finds neither the key nor the prompt
// nor the upstream's answer anywhere in the process's output.
func TestLogsCarryNoKeyOrPrompt(t *testing.T) {
	const prompt = "PROMPT-zq7-the-secret-plan"
	const answer = "ANSWER-kx9-never-logged"
	up := testupstream.Start(t, demobackend.Options{})
	up.Respond(func(r *demobackend.Request) (demobackend.Reply, bool) {
		if r.Chat != nil && strings.Contains(r.Chat.LastUserText(), "cut") {
			return demobackend.Reply{Content: answer + strings.Repeat(" more", 20), BreakAfter: 3}, true
		}
		return testupstream.Text(answer), true
	})
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "quiet")
	cfg := faultConfig(t, nil,
		"\tadmin {$SWITCHYARD_ADMIN:localhost:2019}\n", "\tadmin {$SWITCHYARD_ADMIN:localhost:2019}\n\tdebug\n",
		"\tbind {$SWITCHYARD_LISTEN:127.0.0.1:8080}\n", "\tbind {$SWITCHYARD_LISTEN:127.0.0.1:8080}\n"+accessLog)
	g := startGateway(t, e, cfg)

	secret := key[len(key)-20:] // any 20 characters of the key would do
	sendSecrets(t, g, key, prompt)
	// A refused key is logged by no more than its hint either.
	g.do("GET", "/v1/models", "sk-"+strings.Repeat("Z", 48), "")

	// The access log is written after the response: wait for the line of
	// the last request, the refused key's 401, rather than for a time.
	logs := g.log.String()
	for deadline := time.Now().Add(10 * time.Second); !loggedAccess(logs, "/v1/models", 401); logs = g.log.String() {
		if time.Now().After(deadline) {
			t.Fatalf("no access log line of the refused request in 10s; is the access log on? the test checks nothing:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for what, s := range map[string]string{"the key": secret, "the prompt": prompt, "the answer": answer, "a refused key": strings.Repeat("Z", 20)} {
		if i := strings.Index(logs, s); i >= 0 {
			t.Errorf("the log carries %s: ...%s...", what, logs[max(0, i-300):min(len(logs), i+100)])
		}
	}
}

// loggedAccess reports whether logs hold an access log line of a request
// to uri answered status.
func loggedAccess(logs, uri string, status int) bool {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, `"logger":"http.log.access`) && strings.Contains(line, `"uri":"`+uri+`"`) &&
			strings.Contains(line, fmt.Sprintf(`"status":%d`, status)) {
			return true
		}
	}
	return false
}

// sendSecrets sends key in every header a client might put one in (and in
// the query) with prompt, streamed and not, on /v1 and /v3, plus a
// variant the upstream cuts.
func sendSecrets(t *testing.T, g *gateway, key, prompt string) {
	t.Helper()
	headers := []string{"X-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization", "OpenAI-Organization", "X-Auth-Token", "Referer"}
	for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
		for _, stream := range []bool{false, true} {
			for _, text := range []string{prompt, prompt + " cut"} {
				req := newRequest(t, g, "POST", path+"?api_key="+key, key, faultChat(stream, text))
				for _, h := range headers {
					req.Header.Set(h, key)
				}
				req.Header.Add("Cookie", "session="+key)
				status, body := timedDo(t, 10*time.Second, req)
				if status != http.StatusOK && !strings.HasSuffix(text, "cut") {
					t.Fatalf("%s stream=%v: %d %s", path, stream, status, body)
				}
			}
		}
	}
}

// TestTracesCarryNoKeyOrPrompt enables Caddy's tracing around the
// Switchyard routes, as docs/operations.md shows, with the console
// exporter, and finds neither the key nor the prompt in any span.
func TestTracesCarryNoKeyOrPrompt(t *testing.T) {
	const prompt = "PROMPT-tr4-the-secret-plan"
	up := testupstream.Start(t, demobackend.Options{})
	up.Respond(func(r *demobackend.Request) (demobackend.Reply, bool) {
		if r.Chat != nil && strings.Contains(r.Chat.LastUserText(), "cut") {
			return demobackend.Reply{Content: strings.Repeat("more ", 20), BreakAfter: 3}, true
		}
		return testupstream.Text("fine"), true
	})
	e := embeddedEnv(t, up.URL()).with("OTEL_TRACES_EXPORTER", "console", "OTEL_SERVICE_NAME", "switchyard-test")
	key := fundedKey(t, e, "traced")
	cfg := faultConfig(t, nil, "\tswitchyard_auth /v1/*\n", v1TracingSnippet+"\tswitchyard_auth /v1/*\n", "\tswitchyard_chain @assistant {\n", "\tswitchyard_chain @assistant {\n"+tracingSnippet)
	g := startGateway(t, e, cfg)
	sendSecrets(t, g, key, prompt)
	g.stop() // the batcher writes its spans on shutdown
	out := g.log.String()
	if !strings.Contains(out, `"SpanContext"`) || !strings.Contains(out, "switchyard") {
		t.Fatalf("no spans were exported; the test checks nothing:\n%s", out)
	}
	for what, s := range map[string]string{"the key": key[len(key)-20:], "the prompt": prompt} {
		if i := strings.Index(out, s); i >= 0 {
			t.Errorf("a span carries %s: ...%s...", what, out[max(0, i-300):min(len(out), i+100)])
		}
	}
}

// tracingSnippet is the tracing directive docs/operations.md shows, as it
// goes first in a /v3 chain of Caddyfile.example; v1TracingSnippet is the
// same for the /v1 handlers, which stand in the site with the matcher
// /v1/* (Caddy puts tracing first).
const (
	tracingSnippet = `		tracing {
			span "{http.request.method} {http.request.uri.path}"
		}
`
	v1TracingSnippet = `	tracing /v1/* {
		span "{http.request.method} {http.request.uri.path}"
	}
`
)
