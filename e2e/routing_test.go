package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/storage"
)

// backend is a scripted upstream the test may kill.
type backend struct {
	*testupstream.Server
	ts *httptest.Server
}

func startBackend(t *testing.T, opts demobackend.Options) *backend {
	t.Helper()
	s := testupstream.New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &backend{Server: s, ts: ts}
}

func (b *backend) url() string { return b.ts.URL + "/v1" }

// kill stops the backend: its connections are cut, and new ones refused.
func (b *backend) kill() {
	b.ts.CloseClientConnections()
	b.ts.Close()
}

// chats counts the chat completions the backend received.
func (b *backend) chats() int {
	n := 0
	for _, r := range b.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/chat/completions") {
			n++
		}
	}
	return n
}

// routingConfig is Caddyfile.example with models in its switchyard block.
func routingConfig(t *testing.T, models string) string {
	t.Helper()
	return exampleConfig(t, "\tswitchyard {\n", "\tswitchyard {\n"+models+"\n")
}

// routedGateway runs the gateway with models and no single upstream.
func routedGateway(t *testing.T, models string) (*gateway, env, string) {
	t.Helper()
	e := embeddedEnv(t, "")
	key := fundedKey(t, e, "router")
	g := startGateway(t, e, writeConfig(t, routingConfig(t, models)))
	return g, e, key
}

func chatFor(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
}

func streamFor(model, text string) string {
	return `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"` + text + `"}]}`
}

// usageRecords waits for n usage records of account and returns them.
func usageRecords(t *testing.T, e env, account string, n int) []storage.UsageRecord {
	t.Helper()
	st := openStore(t, e)
	defer st.Close()
	ctx := context.Background()
	acct := accountNamed(t, st, account)
	deadline := time.Now().Add(5 * time.Second)
	for {
		recs, err := st.UsageRecords(ctx, acct.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) >= n || time.Now().After(deadline) {
			if len(recs) != n {
				t.Fatalf("%d usage records, want %d", len(recs), n)
			}
			return recs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRoutingRoundRobin: requests for a model alternate between its two
// upstreams on /v1 and /v3 alike, each upstream gets its own model name,
// the configured models are what both model lists show, and an unknown
// model is refused without reaching any upstream.
func TestRoutingRoundRobin(t *testing.T) {
	a, b := startBackend(t, demobackend.Options{}), startBackend(t, demobackend.Options{})
	other := startBackend(t, demobackend.Options{})
	g, e, key := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %s {
				model alpha-on-a
				name a
			}
			upstream %s {
				name b
			}
		}
		model beta {
			upstream %s
		}`, a.url(), b.url(), other.url()))

	for i := 0; i < 6; i++ {
		if status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha")); status != 200 {
			t.Fatalf("request %d: %d %s", i, status, body)
		}
	}
	if a.chats() != 3 || b.chats() != 3 {
		t.Fatalf("round robin sent %d and %d of 6 requests", a.chats(), b.chats())
	}
	if got := a.ChatRequests()[0].Model; got != "alpha-on-a" {
		t.Errorf("upstream a got model %q, want its own name alpha-on-a", got)
	}
	if got := b.ChatRequests()[0].Model; got != "alpha" {
		t.Errorf("upstream b got model %q, want alpha", got)
	}

	// /v3 chooses from the same pool, continuing the same rotation.
	for i := 0; i < 2; i++ {
		if status, out := v3Stream(t, g, key, streamFor("alpha", "hello")); status != 200 {
			t.Fatalf("/v3: %d %s", status, out)
		}
	}
	if a.chats() != 4 || b.chats() != 4 {
		t.Fatalf("after two /v3 requests the upstreams have %d and %d", a.chats(), b.chats())
	}

	recs := usageRecords(t, e, "router", 8)
	byUpstream := map[string]int{}
	for _, r := range recs {
		if r.Model != "alpha" {
			t.Errorf("record %s names model %q", r.RequestID, r.Model)
		}
		byUpstream[r.Upstream]++
	}
	if byUpstream["a"] != 4 || byUpstream["b"] != 4 {
		t.Errorf("records by upstream: %v, want 4 each for a and b", byUpstream)
	}

	for _, path := range []string{"/v1/models", "/v3/models"} {
		status, _, body := g.do("GET", path, key, "")
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &list) != nil || list.Object != "list" ||
			len(list.Data) != 2 || list.Data[0].ID != "alpha" || list.Data[1].ID != "beta" || list.Data[0].Object != "model" {
			t.Errorf("GET %s: %d %s, want alpha and beta in a list", path, status, body)
		}
	}
	if status, _, body := g.do("GET", "/v1/models/beta", key, ""); status != 200 || !strings.Contains(body, `"id":"beta"`) {
		t.Errorf("GET /v1/models/beta: %d %s", status, body)
	}

	before := a.chats() + b.chats() + other.chats()
	for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
		status, _, body := g.do("POST", path, key, chatFor("gamma"))
		if status != 404 || !strings.Contains(body, `"code":"model_not_found"`) {
			t.Errorf("POST %s for an unknown model: %d %s, want 404 model_not_found", path, status, body)
		}
	}
	if after := a.chats() + b.chats() + other.chats(); after != before {
		t.Errorf("an unknown model reached an upstream")
	}
	if n := len(usageRecords(t, e, "router", 8)); n != 8 {
		t.Errorf("refused requests were recorded")
	}
}

// TestRoutingLeastConn: with a stream open on one upstream, least_conn
// sends every other request to the idle one.
func TestRoutingLeastConn(t *testing.T) {
	slow := demobackend.Reply{Content: "A slow answer.", Delay: 1500 * time.Millisecond}
	a, b := startBackend(t, demobackend.Options{}), startBackend(t, demobackend.Options{})
	for _, up := range []*backend{a, b} {
		up.Match(testupstream.LastUserContains("slow"), slow)
	}
	g, _, key := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %s
			upstream %s
			lb_policy least_conn
		}`, a.url(), b.url()))

	done := make(chan int)
	go func() {
		status, _, _ := g.do("POST", "/v1/chat/completions", key, streamFor("alpha", "slow"))
		done <- status
	}()
	busy, idle := waitForChat(t, a, b)
	for i := 0; i < 4; i++ {
		if status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha")); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
	}
	if busy.chats() != 1 || idle.chats() != 4 {
		t.Errorf("with one stream open, least_conn sent %d to the busy upstream and %d to the idle one; want 0 and 4",
			busy.chats()-1, idle.chats())
	}
	if status := <-done; status != 200 {
		t.Errorf("the slow stream: %d", status)
	}
}

// waitForChat waits until one of a and b received a chat request and
// returns it first.
func waitForChat(t *testing.T, a, b *backend) (*backend, *backend) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		switch {
		case a.chats() > 0:
			return a, b
		case b.chats() > 0:
			return b, a
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no upstream received the request")
	return nil, nil
}

// TestRoutingUpstreamDown: an upstream that answers 5xx or 429, or that
// is gone, costs the client nothing: the request is retried on the other
// upstream before any byte reached the client. The active health check
// takes a dead upstream out of the pool within its interval, after which
// no request is sent to it at all.
//
// The checks' timeout is wide: a live upstream whose check is slow on a
// loaded machine must not leave the pool, and a dead one fails its check
// at once (the connection is refused). The upstream dies right after a
// check of it, so that the first requests reach it before the next
// check does: a request, not the check, finds it dead and is retried.
// Whether the check then took it out is judged only after rounds of
// checks that began after it died, not after a time.
func TestRoutingUpstreamDown(t *testing.T) {
	a, b := startBackend(t, demobackend.Options{}), startBackend(t, demobackend.Options{})
	g, _, key := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %s {
				name a
			}
			upstream %s {
				name b
			}
			health_interval 1s
			health_timeout 5s
			fail_duration 300ms
		}`, a.url(), b.url()))

	for _, status := range []int{500, 503, 429} {
		a.Enqueue(testupstream.Error(status, ""))
		// Round robin sends one of the two to a, which fails once; b
		// answers both.
		for i := 0; i < 2; i++ {
			if got, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha")); got != 200 {
				t.Fatalf("an upstream answering %d: the client got %d %s", status, got, body)
			}
		}
		if a.Pending() != 0 {
			t.Fatalf("the failing upstream was not tried")
		}
		waitHealthy(t, g, "alpha", "a") // the failure expires
	}

	checks := healthChecks(b)
	for deadline := time.Now().Add(10 * time.Second); healthChecks(b) == checks; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no health check of the upstream in 10s")
		}
	}
	b.kill()
	rounds := healthChecks(a)
	before := scrape(t, g)
	for i := 0; i < 10; i++ {
		if status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha")); status != 200 {
			t.Fatalf("request %d after an upstream died: %d %s", i, status, body)
		}
		if status, out := v3Stream(t, g, key, streamFor("alpha", "hi")); status != 200 || !strings.Contains(out, "[DONE]") {
			t.Fatalf("/v3 request %d after an upstream died: %d %s", i, status, out)
		}
	}
	// Both upstreams are checked in each round. Two rounds begun after b
	// died, as a's checks show, have checked b: the first has marked it
	// by the time the second begins. Until then b may be out of the pool
	// only for the requests' passive failure marks, which expire.
	for deadline := time.Now().Add(10 * time.Second); healthChecks(a) < rounds+3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d health checks of the live upstream in 10s, want 3", healthChecks(a)-rounds)
		}
	}
	const healthy = `switchyard_upstream_healthy{model="alpha",upstream="b"}`
	deadline := time.Now().Add(10 * time.Second)
	for scrape(t, g)[healthy] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the dead upstream is still in the pool after ten health intervals")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(400 * time.Millisecond) // past any passive failure mark
	mid := scrape(t, g)
	for i := 0; i < 5; i++ {
		if status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha")); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
	}
	after := scrape(t, g)
	const sentToB = `switchyard_upstream_selections_total{model="alpha",upstream="b"}`
	if after[sentToB] != mid[sentToB] {
		t.Errorf("requests still went to the dead upstream once the health check removed it")
	}
	if mid[`switchyard_upstream_retries_total{model="alpha"}`] <= before[`switchyard_upstream_retries_total{model="alpha"}`] {
		t.Errorf("no retry counted while the dead upstream was still in the pool")
	}
	if after[`switchyard_upstream_healthy{model="alpha",upstream="a"}`] != 1 {
		t.Errorf("the live upstream is not reported healthy")
	}
}

// healthChecks counts the active health checks the backend received.
func healthChecks(b *backend) int {
	n := 0
	for _, r := range b.Requests() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/models") {
			n++
		}
	}
	return n
}

// waitHealthy waits until the gateway reports upstream of model back in
// its pool: its passive failure mark expired on the gateway's clock,
// which a loaded machine may run late.
func waitHealthy(t *testing.T, g *gateway, model, upstream string) {
	t.Helper()
	metric := fmt.Sprintf(`switchyard_upstream_healthy{model=%q,upstream=%q}`, model, upstream)
	for deadline := time.Now().Add(10 * time.Second); scrape(t, g)[metric] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s still out of the pool after 10s", model, upstream)
		}
	}
}

// TestRoutingNoRetryAfterFirstByte: an upstream that fails mid-stream
// gives the client the stream's end as it is, on /v1 the upstream's own
// error frame and on /v3 the documented stream_interrupted error, and
// the request is not sent anywhere else.
func TestRoutingNoRetryAfterFirstByte(t *testing.T) {
	a, b := startBackend(t, demobackend.Options{}), startBackend(t, demobackend.Options{})
	broken := demobackend.Reply{Content: "one two three four five six", BreakAfter: 3}
	g, _, key := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %s
			upstream %s
			lb_policy first
			fallback beta
		}
		model beta {
			upstream %s
		}`, a.url(), b.url(), b.url()))

	a.Enqueue(broken)
	status, _, body := g.do("POST", "/v1/chat/completions", key, streamFor("alpha", "hi"))
	if status != 200 || !strings.Contains(body, "data: ") || strings.Contains(body, "[DONE]") {
		t.Errorf("/v1 stream cut by the upstream: %d %q, want the first chunks and no end", status, body)
	}

	a.Enqueue(broken)
	status, out := v3Stream(t, g, key, streamFor("alpha", "hi"))
	if status != 200 || !strings.Contains(out, `"stream_interrupted"`) {
		t.Errorf("/v3 stream cut by the upstream: %d %s, want the in-stream stream_interrupted error", status, out)
	}
	if a.chats() != 2 || b.chats() != 0 {
		t.Errorf("a stream that had started was retried: a got %d, b got %d", a.chats(), b.chats())
	}
}

// TestRoutingFallback: when every upstream of a model fails before
// answering, its fallback model answers and is charged at its own price,
// on /v1 and /v3.
func TestRoutingFallback(t *testing.T) {
	a1, a2 := startBackend(t, demobackend.Options{}), startBackend(t, demobackend.Options{})
	f := startBackend(t, demobackend.Options{})
	g, e, key := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %s
			upstream %s
			price 1 1
			fallback beta
		}
		model beta {
			upstream %s {
				name f
				model beta-upstream
			}
			price 1000 2000
		}`, a1.url(), a2.url(), f.url()))

	usage := &demobackend.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}
	for _, up := range []*backend{a1, a2} {
		up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
			return testupstream.Error(503, `{"error":{"message":"overloaded"}}`), true
		})
	}
	f.Enqueue(demobackend.Reply{Content: "From the fallback.", Usage: usage},
		demobackend.Reply{Content: "From the fallback.", Usage: usage})

	status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha"))
	if status != 200 || !strings.Contains(body, "From the fallback.") {
		t.Fatalf("/v1: %d %s", status, body)
	}
	if status, out := v3Stream(t, g, key, streamFor("alpha", "hi")); status != 200 || !strings.Contains(out, `" fallback"`) {
		t.Fatalf("/v3: %d %s", status, out)
	}
	// Both of alpha's upstreams failed on the first request and are out
	// of the pool for fail_duration: the second goes to beta at once.
	if a1.chats() != 1 || a2.chats() != 1 || f.chats() != 2 {
		t.Errorf("requests: %d, %d to alpha's upstreams, %d to the fallback; want 1, 1, 2", a1.chats(), a2.chats(), f.chats())
	}
	if got := f.ChatRequests()[0].Model; got != "beta-upstream" {
		t.Errorf("the fallback upstream got model %q", got)
	}

	recs := usageRecords(t, e, "router", 2)
	cents := map[string]int64{}
	for _, c := range charges(t, e, "router") {
		cents[strings.TrimPrefix(c.Reference, storage.ChargeReferencePrefix)] = -c.AmountCents
	}
	for _, r := range recs {
		// $10 and $20 per million: 1000 prompt tokens 1 cent, 500
		// completion tokens 1 cent; alpha's prices would make it 0.15
		// cents, billed as the minimum.
		want := int64(1000*1000+500*2000) / 1_000_000
		if r.Model != "beta" || r.Upstream != "f" {
			t.Errorf("record %+v: want model beta and upstream f", r)
		}
		if r.PromptTokens >= 1000 && cents[r.RequestID] < want {
			t.Errorf("record %s (%d+%d tokens) charged %d cents, want at least %d at beta's prices",
				r.RequestID, r.PromptTokens, r.CompletionTokens, cents[r.RequestID], want)
		}
		if got := r.CostCents; got != cents[r.RequestID] {
			t.Errorf("record cost %d, ledger %d", got, cents[r.RequestID])
		}
	}

	// With the fallback failing too, the client gets the envelope.
	f.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Error(500, ""), true
	})
	status, _, body = g.do("POST", "/v1/chat/completions", key, chatFor("alpha"))
	if status != 502 || !strings.Contains(body, `"code":"upstream_unavailable"`) {
		t.Errorf("every pool failing: %d %s, want 502 upstream_unavailable", status, body)
	}
}

// TestRoutingReload: a config reload that changes a model's pool leaves
// streams open on the old pool to finish, and sends new requests to the
// new one.
func TestRoutingReload(t *testing.T) {
	a := startBackend(t, demobackend.Options{InterTokenDelay: 100 * time.Millisecond})
	b := startBackend(t, demobackend.Options{})
	models := `
		model alpha {
			upstream %s
			health_interval 200ms
		}`
	g, _, key := routedGateway(t, fmt.Sprintf(models, a.url()))

	const answer = "one two three four five six seven eight nine ten"
	a.Match(testupstream.LastUserContains("long"), testupstream.Text(answer))
	var wg sync.WaitGroup
	results := make([]string, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/v1/chat/completions"
			if i == 1 {
				path = "/v3/chat/completions"
			}
			results[i], errs[i] = readAnswer(g, path, key, streamFor("alpha", "long"))
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.chats() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	g.load(routingConfig(t, fmt.Sprintf(models, b.url())))
	for i := 0; i < 3; i++ {
		if status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("alpha")); status != 200 {
			t.Fatalf("after the reload: %d %s", status, body)
		}
	}
	wg.Wait()
	for i, out := range results {
		if errs[i] != nil || !strings.Contains(out, "[DONE]") || !strings.Contains(out, "ten") {
			t.Errorf("stream %d open across the reload: %v\n%s", i, errs[i], out)
		}
	}
	if a.chats() != 2 || b.chats() != 3 {
		t.Errorf("old pool got %d, new pool %d; want 2 and 3", a.chats(), b.chats())
	}
}

// readAnswer posts body to path and reads the whole answer.
func readAnswer(g *gateway, path, key, body string) (string, error) {
	req, _ := http.NewRequest("POST", g.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var sb strings.Builder
	_, err = io.Copy(&sb, bufio.NewReader(resp.Body))
	return sb.String(), err
}

// TestRoutingSingleUpstreamUnchanged: without a models block, /v1/models
// is the upstream's own list, any model name passes through, and
// /v3/models names the upstream's model.
func TestRoutingSingleUpstreamUnchanged(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{Models: []string{"backend-a", "backend-b"}})
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "single")
	g := startGateway(t, e)

	status, _, body := g.do("GET", "/v1/models", key, "")
	if status != 200 || !strings.Contains(body, "backend-a") || !strings.Contains(body, "backend-b") {
		t.Errorf("/v1/models: %d %s, want the upstream's list", status, body)
	}
	status, _, body = g.do("GET", "/v3/models", key, "")
	if status != 200 || !strings.Contains(body, `"id":"backend-a"`) || strings.Contains(body, "backend-b") {
		t.Errorf("/v3/models: %d %s, want the model /v3 uses", status, body)
	}
	if status, _, body := g.do("POST", "/v1/chat/completions", key, chatFor("backend-b")); status != 200 {
		t.Errorf("/v1: %d %s", status, body)
	}
	recs := usageRecords(t, e, "single", 1)
	if recs[0].Model != "backend-b" || recs[0].Upstream != "" {
		t.Errorf("record names model %q and upstream %q", recs[0].Model, recs[0].Upstream)
	}
}
