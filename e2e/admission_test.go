package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestV1RefusesWhatItCannotMeter sends one JSON chat body to
// /v1/chat/completions under Content-Types and encodings the meter does
// not read. Each must be refused with 415 before anything is spent: the
// upstream sees nothing, the key's rate is untouched and nothing is
// charged. The same body labelled as JSON is served and charged, so the
// refusals are the label's doing.
func TestV1RefusesWhatItCannotMeter(t *testing.T) {
	up, e, key, g := fundedGateway(t, "labeller")
	big := &demobackend.Usage{PromptTokens: 60_000, CompletionTokens: 100, TotalTokens: 60_100}
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return demobackend.Reply{Content: "Fine.", Usage: big}, true
	})
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(chatBody))
	_ = zw.Close()

	for _, tc := range []struct {
		name, contentType, encoding, body string
	}{
		{"multipart", "multipart/form-data; boundary=x", "", chatBody},
		{"multipart mixed", "multipart/mixed; boundary=x", "", chatBody},
		{"text", "text/plain", "", chatBody},
		{"form", "application/x-www-form-urlencoded", "", chatBody},
		{"no Content-Type", "", "", chatBody},
		{"JSON in UTF-16", "application/json; charset=utf-16", "", chatBody},
		{"JSON with an unknown parameter", "application/json; profile=x", "", chatBody},
		{"JSON with a malformed parameter", "application/json; charset", "", chatBody},
		{"JSON look-alike", "application/jsonx", "", chatBody},
		{"gzipped JSON", "application/json", "gzip", zipped.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, charged := len(up.Requests()), len(charges(t, e, "labeller"))
			req := newRequest(t, g, "POST", "/v1/chat/completions", key, tc.body)
			req.Header.Del("Content-Type")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}
			status, h, body := send(t, req)
			wantError(t, tc.name, status, body, http.StatusUnsupportedMediaType, "unsupported_media_type", "invalid_request_error")
			if h.Get("X-Ratelimit-Remaining-Requests") != "" {
				t.Error("a request refused for its Content-Type reached the rate limiter")
			}
			if n := len(up.Requests()) - before; n != 0 {
				t.Errorf("%d requests reached the upstream", n)
			}
			if n := len(charges(t, e, "labeller")) - charged; n != 0 {
				t.Errorf("%d charges", n)
			}
		})
	}

	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;Charset=\"UTF-8\""} {
		before := len(charges(t, e, "labeller"))
		status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody, "Content-Type", ct)
		if status != http.StatusOK {
			t.Fatalf("%q: %d %s", ct, status, body)
		}
		if n := len(chargedSince(t, e, "labeller", before)); n != 1 {
			t.Fatalf("%q: %d charges, want 1", ct, n)
		}
	}
}

// TestV1RefusesAQueryString: a /v1 route that takes a JSON body takes no
// query string, which the meter does not read and a backend might: the
// request is refused with 400 before anything is spent or reaches the
// upstream. A read keeps its query, and a bare "?" is not refused.
func TestV1RefusesAQueryString(t *testing.T) {
	up, e, key, g := fundedGateway(t, "querier")
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) { return testupstream.Text("Fine."), true })
	for _, query := range []string{"?max_tokens=1000000", "?model=dear-model&stream=true", "?api-version=2024-10-21", "?%zz"} {
		for _, body := range []string{chatBody, streamBody} {
			before := len(up.Requests())
			status, h, out := g.do("POST", "/v1/chat/completions"+query, key, body)
			wantError(t, query, status, out, http.StatusBadRequest, "unsupported_parameter", "invalid_request_error")
			if h.Get("X-Ratelimit-Remaining-Requests") != "" {
				t.Errorf("%s: a request refused for its query string reached the rate limiter", query)
			}
			if n := len(up.Requests()) - before; n != 0 {
				t.Fatalf("%s: %d requests reached the upstream", query, n)
			}
		}
	}
	if n := len(charges(t, e, "querier")); n != 0 {
		t.Fatalf("%d charges for refused requests", n)
	}
	status, h, out := g.do("POST", "/v1/chat/completions?", key, chatBody)
	if status != http.StatusOK {
		t.Fatalf("a bare \"?\": %d %s", status, out)
	}
	if got := h.Get("X-Ratelimit-Remaining-Requests"); got != "59" {
		t.Errorf("remaining %q after the first admitted request, want 59: the refusals spent none", got)
	}
	reqs := up.Requests()
	if got := reqs[len(reqs)-1].RequestURI; strings.Contains(got, "?") {
		t.Errorf("the upstream was asked for %q", got)
	}
	if status, _, out := g.do("GET", "/v1/models?limit=5", key, ""); status != http.StatusOK {
		t.Errorf("a read with a query string: %d %s", status, out)
	}
}

// TestStreamSlotsDoNotDependOnContentType opens twelve streams at once on
// one revision-B key (five slots), labelled multipart. However they are
// labelled, no more than five may run.
func TestStreamSlotsDoNotDependOnContentType(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "streamer")
	g := startGateway(t, e)

	statuses := parallelStreams(t, g, key, "/v1/chat/completions", 12, streamBody, "multipart/form-data; boundary=x")
	if statuses[http.StatusOK] > 5 {
		t.Fatalf("statuses %v: more than five streams at once on one key", statuses)
	}
}

// TestV3HoldDoesNotDependOnContentType: an account holding 100 cents asks
// for a stream whose estimate is the revision's cap (500 cents), three
// times at once. The first holds all 100 cents and the others are
// refused, whatever the Content-Type says; a multipart label used to shrink
// each hold to the 1-cent minimum and let all three run.
func TestV3HoldDoesNotDependOnContentType(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := newKey(t, e, "holder")
	st := openStore(t, e)
	credit(t, st, accountNamed(t, st, "holder").ID, 100, "hold-test")
	g := startGateway(t, e)

	body := `{"model":"svc-3","stream":true,"max_completion_tokens":1000000,"messages":[{"role":"user","content":"hi"}]}`
	for _, ct := range []string{"multipart/form-data; boundary=x", "application/json"} {
		statuses := parallelStreams(t, g, key, "/v3/chat/completions", 3, body, ct)
		if statuses[http.StatusOK] > 1 {
			t.Fatalf("%s: statuses %v: three holds of the whole balance admitted at once", ct, statuses)
		}
	}
}

// parallelStreams sends n streaming requests at once and keeps every
// admitted one open until all have answered, so that each holds its slot
// and hold while the others are decided. It returns the count of each
// status.
func parallelStreams(t *testing.T, g *gateway, key, path string, n int, body, contentType string) map[int]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	statuses := map[int]int{}
	var open []io.Closer
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", g.base+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", contentType)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			if resp.StatusCode == http.StatusOK {
				_, _ = bufio.NewReader(resp.Body).ReadString('\n')
			}
			mu.Lock()
			statuses[resp.StatusCode]++
			open = append(open, resp.Body)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, b := range open {
		b.Close()
	}
	return statuses
}

// send does req and returns status, headers and body.
func send(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// stalledBody opens a connection to g and sends a POST to path declaring
// a body of declared bytes, of which it sends only sent; the rest never
// comes. The connection closes when the test ends.
func stalledBody(t *testing.T, g *gateway, key, path string, declared int64, sent string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(g.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		path, key, declared, sent)
	return c
}

// answerWithin reads the response on c, or returns status 0 when none
// arrived within d.
func answerWithin(t *testing.T, c net.Conn, d time.Duration) (int, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStalledBodiesDoNotStarveOthers: eight connections of one account
// each declare a 32 MiB body and send ten bytes of it. Another account's
// request with a body well over 4 KiB must still be served, and the
// stalled ones hold no more than what they sent.
func TestStalledBodiesDoNotStarveOthers(t *testing.T) {
	up, e := scriptedEnv(t)
	attacker := fundedKey(t, e, "staller")
	victim := fundedKey(t, e, "bystander")
	g := startGateway(t, e)

	for range 8 {
		stalledBody(t, g, attacker, "/v1/chat/completions", 32<<20, `{"model":`)
	}
	time.Sleep(200 * time.Millisecond) // let the gateway start reading them

	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("long prompt ", 2000) + `"}]}`
	up.Enqueue(testupstream.Text("Served."))
	status, _, out := g.do("POST", "/v1/chat/completions", victim, body)
	if status != http.StatusOK {
		t.Fatalf("another account's %d-byte request beside eight stalled bodies: %d %s", len(body), status, out)
	}
}

// TestAdmissionBeforeTheBody: a key whose account has nothing, and a key
// past its rate once the node knows it (here, from the answer to the
// key's one request), are refused as soon as their headers arrive,
// without waiting for a body that never comes: in process, and with
// Redis, where the check before the body asks Redis nothing.
func TestAdmissionBeforeTheBody(t *testing.T) {
	for _, mode := range []string{"embedded", "distributed"} {
		t.Run(mode, func(t *testing.T) {
			up := testupstream.Start(t, demobackend.Options{})
			e := embeddedEnv(t, up.URL())
			if mode == "distributed" {
				e = distributedEnv(t, up.URL())
			}
			broke := newKey(t, e, "broke")
			busy := fundedKey(t, e, "busy")
			g := startGateway(t, e, switchyardConfig(t, "limits {\n\t\t\trequests 1 1m\n\t\t\t"+loadedRedis+"\n\t\t}"))

			c := stalledBody(t, g, broke, "/v1/chat/completions", 1000, "")
			if status, body := answerWithin(t, c, 5*time.Second); status != http.StatusPaymentRequired {
				t.Fatalf("a zero balance with its body still to come: %d %s, want 402 at once", status, body)
			}
			c = stalledBody(t, g, "sk-"+strings.Repeat("x", 40), "/v1/chat/completions", 1000, "")
			if status, body := answerWithin(t, c, 5*time.Second); status != http.StatusUnauthorized {
				t.Fatalf("an unknown key with its body still to come: %d %s, want 401 at once", status, body)
			}

			if status, _, body := g.do("GET", "/v1/models", busy, ""); status != http.StatusOK {
				t.Fatalf("first request: %d %s", status, body)
			}
			for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
				c = stalledBody(t, g, busy, path, 1000, "")
				if status, body := answerWithin(t, c, 5*time.Second); status != http.StatusTooManyRequests {
					t.Fatalf("%s past the rate with its body still to come: %d %s, want 429 at once", path, status, body)
				}
			}
		})
	}
}

// TestV1HidesTheUpstreamsServer: the upstream's Server, X-Powered-By and
// Via never reach a /v1 client, on a JSON answer or a stream; the client
// sees the gateway's own Server.
func TestV1HidesTheUpstreamsServer(t *testing.T) {
	up, _, key, g := fundedGateway(t, "curious")
	banner := http.Header{
		"Server":       {"vllm-internal/0.6.3 (gpu-node-7)"},
		"X-Powered-By": {"internal-stack"},
		"Via":          {"1.1 internal-lb"},
	}
	for _, body := range []string{chatBody, streamBody} {
		up.Enqueue(demobackend.Reply{Content: "Fine.", Header: banner})
		status, h, out := g.do("POST", "/v1/chat/completions", key, body)
		if status != http.StatusOK {
			t.Fatalf("%d %s", status, out)
		}
		if got := h.Values("Server"); len(got) != 1 || got[0] != "Caddy" {
			t.Errorf("Server %q, want the gateway's own \"Caddy\"", got)
		}
		if got := h.Get("X-Powered-By"); got != "" {
			t.Errorf("X-Powered-By %q reached the client", got)
		}
		if got := h.Values("Via"); len(got) != 0 {
			t.Errorf("Via %q reached the client", got)
		}
	}
}

// TestStalledBodyTimesOut: a body that stops arriving is refused with 408
// at body_timeout, and what it held of its account's share is free at
// that moment: the account's next large body is admitted.
func TestStalledBodyTimesOut(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "slowpoke")
	g := startGateway(t, e, switchyardConfig(t,
		"limits {\n\t\t\tbody_timeout 1s\n\t\t\tbody_memory 4MiB\n\t\t\taccount_body_memory 512KiB\n\t\t}"))

	prompt := strings.Repeat("x", 300<<10)
	large := `{"model":"m","messages":[{"role":"user","content":"` + prompt + `"}]}`
	c := stalledBody(t, g, key, "/v1/chat/completions", 1<<20, large[:len(large)-10])
	time.Sleep(300 * time.Millisecond) // the first 300 KiB are read and held
	status, _, out := g.do("POST", "/v1/chat/completions", key, large)
	wantError(t, "a second large body beside the stalled one", status, out, http.StatusTooManyRequests, "rate_limit_exceeded", "requests")

	status, body := answerWithin(t, c, 5*time.Second)
	wantError(t, "the stalled body", status, body, http.StatusRequestTimeout, "request_timeout", "invalid_request_error")
	up.Enqueue(testupstream.Text("Served."))
	if status, _, out := g.do("POST", "/v1/chat/completions", key, large); status != http.StatusOK {
		t.Fatalf("the account's large body once the stalled one timed out: %d %.300s", status, out)
	}
}
