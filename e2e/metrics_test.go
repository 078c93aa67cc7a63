package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
)

// TestMetricsCountRequestsAndSurviveReload makes requests of every kind
// the metrics tell apart, reads Caddy's admin /metrics, reloads the same
// config and checks that every count is still there and goes on from
// where it was.
func TestMetricsCountRequestsAndSurviveReload(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "acme")
	burst := fundedKey(t, e, "burst")
	broke := newKey(t, e, "broke")
	config := withSwitchyardOption(t, "limits {\n\t\t\trequests 5 1m\n\t\t}")
	g := startGateway(t, e, config)
	usage := &demobackend.Usage{PromptTokens: 200_000, CompletionTokens: 100_000, TotalTokens: 300_000}
	price := policy.ProfileFor(policy.RevisionB).Price(200_000, 100_000)

	expect := func(want int, method, path, key, body string) {
		t.Helper()
		if got, _, out := g.do(method, path, key, body); got != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, got, out, want)
		}
	}
	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
	expect(200, "POST", "/v1/chat/completions", key, chatBody)
	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
	expect(200, "POST", "/v3/chat/completions", key, chatBody)
	expect(404, "GET", "/v3/nowhere", key, "")
	expect(401, "POST", "/v1/chat/completions", "", chatBody)
	expect(402, "POST", "/v1/chat/completions", broke, chatBody)
	for range 5 {
		expect(200, "GET", "/v1/models", burst, "")
	}
	expect(429, "GET", "/v1/models", burst, "")

	want := map[string]float64{
		`switchyard_requests_total{code="none",route="v1",status="200"}`:                 6,
		`switchyard_requests_total{code="none",route="v3_chat",status="200"}`:            1,
		`switchyard_requests_total{code="route_not_found",route="other",status="404"}`:   1,
		`switchyard_requests_total{code="invalid_api_key",route="v1",status="401"}`:      1,
		`switchyard_requests_total{code="insufficient_balance",route="v1",status="402"}`: 1,
		`switchyard_requests_total{code="rate_limit_exceeded",route="v1",status="429"}`:  1,
		`switchyard_limiter_decisions_total{decision="admitted"}`:                        8,
		`switchyard_limiter_decisions_total{decision="insufficient_balance"}`:            1,
		`switchyard_limiter_decisions_total{decision="rate_limited"}`:                    1,
		`switchyard_limiter_redis_fallbacks_total`:                                       0,
		`switchyard_tokens_total{kind="prompt",route="v1"}`:                              200_000,
		`switchyard_tokens_total{kind="completion",route="v1"}`:                          100_000,
		`switchyard_charged_cents_total{route="v1"}`:                                     float64(price),
		`switchyard_upstream_first_byte_seconds_count`:                                   1,
	}
	settleLedgers(t) // charges are counted when they are committed
	got := scrape(t, g)
	checkSeries(t, "before the reload", got, want)
	// /v3 adds the service prompt to what the caller sent, so its prompt
	// tokens are the backend's count; they are counted and charged.
	for _, s := range []string{
		`switchyard_tokens_total{kind="completion",route="v3_chat"}`,
		`switchyard_charged_cents_total{route="v3_chat"}`,
	} {
		if got[s] <= 0 {
			t.Errorf("%s = %v, want a positive count", s, got[s])
		}
	}

	readies := strings.Count(g.log.String(), "switchyard ready")
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	g.load(string(b))
	if n := strings.Count(g.log.String(), "switchyard ready"); n != readies+1 {
		t.Fatalf("the config was provisioned %d times by the reload, want once", n-readies)
	}
	checkSeries(t, "after the reload", scrape(t, g), want)

	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
	expect(200, "POST", "/v1/chat/completions", key, chatBody)
	want[`switchyard_requests_total{code="none",route="v1",status="200"}`]++
	want[`switchyard_limiter_decisions_total{decision="admitted"}`]++
	want[`switchyard_tokens_total{kind="prompt",route="v1"}`] *= 2
	want[`switchyard_tokens_total{kind="completion",route="v1"}`] *= 2
	want[`switchyard_charged_cents_total{route="v1"}`] *= 2
	want[`switchyard_upstream_first_byte_seconds_count`]++
	settleLedgers(t)
	checkSeries(t, "counting on after the reload", scrape(t, g), want)
}

// scrape reads the admin endpoint's /metrics into a map from series (as
// the text format writes it, labels sorted) to value.
func scrape(t *testing.T, g *gateway) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + g.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	out := make(map[string]float64)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkSeries(t *testing.T, when string, got, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		g, ok := got[series]
		if !ok {
			t.Errorf("%s: no series %s", when, series)
		} else if g != v {
			t.Errorf("%s: %s = %v, want %v", when, series, g, v)
		}
	}
}

// TestRequestTimingMetrics checks the request histograms and their
// bounded model label, the streams gauge, the admin API's count, the
// ledger lag and that only the store in use exports its statements.
func TestRequestTimingMetrics(t *testing.T) {
	up, e := scriptedEnv(t, "SWITCHYARD_UPSTREAM_MODEL", "m")
	key := fundedKey(t, e, "timed")
	g := startGateway(t, e, filepath.Join(repoRoot, "Caddyfile.example"))
	usage := &demobackend.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}

	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
	if got, _, out := g.do("POST", "/v1/chat/completions", key, streamBody); got != 200 {
		t.Fatalf("stream: %d %s", got, out)
	}
	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
	unnamed := strings.Replace(chatBody, `"model":"m"`, `"model":"made-up-by-a-client"`, 1)
	if got, _, out := g.do("POST", "/v1/chat/completions", key, unnamed); got != 200 {
		t.Fatalf("another model: %d %s", got, out)
	}
	if got, _, _ := g.do("GET", "/v1/models", key, ""); got != 200 {
		t.Fatalf("GET /v1/models: %d", got)
	}
	if got, _, _ := g.do("GET", "/admin/me", "", ""); got != 401 {
		t.Fatalf("GET /admin/me without a token: %d", got)
	}
	settleLedgers(t)

	got := scrape(t, g)
	checkSeries(t, "after the requests", got, map[string]float64{
		`switchyard_request_duration_seconds_count{model="m",route="v1"}`:     1,
		`switchyard_time_to_first_byte_seconds_count{model="m",route="v1"}`:   1,
		`switchyard_request_duration_seconds_count{model="other",route="v1"}`: 1,
		`switchyard_request_duration_seconds_count{model="none",route="v1"}`:  1,
		`switchyard_streams_in_flight{route="v1"}`:                            0,
		`switchyard_admin_requests_total{method="GET",status="401"}`:          1,
		`switchyard_ledger_lag_seconds_count`:                                 2,
	})
	for series := range got {
		if strings.Contains(series, "made-up") {
			t.Errorf("a model a client named became a label: %s", series)
		}
		if strings.HasPrefix(series, "switchyard_postgres_statements_total") {
			t.Errorf("the embedded store exports PostgreSQL's statements: %s", series)
		}
	}
	if got[`switchyard_sqlite_statements_total{kind="read"}`] <= 0 {
		t.Error("the embedded store's statements are not counted")
	}
	if caddy := got[`caddy_http_request_duration_seconds_count{code="200",handler="switchyard_auth",method="POST",server="srv0"}`]; caddy < 2 {
		t.Errorf("Caddy's server metrics are off in Caddyfile.example (%v requests)", caddy)
	}
}

// TestStreamsInFlightGauge reads the gauge while a stream is open.
func TestStreamsInFlightGauge(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 100 * time.Millisecond})
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "streamer")
	g := startGateway(t, e, filepath.Join(repoRoot, "Caddyfile.example"))
	up.Enqueue(demobackend.Reply{Content: strings.Repeat("slow ", 40)})
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.do("POST", "/v1/chat/completions", key, streamBody)
	}()
	deadline := time.Now().Add(3 * time.Second)
	for scrape(t, g)[`switchyard_streams_in_flight{route="v1"}`] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("an open stream is not counted in flight")
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-done
	if n := scrape(t, g)[`switchyard_streams_in_flight{route="v1"}`]; n != 0 {
		t.Fatalf("%v streams in flight after the stream ended", n)
	}
}
