package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

const chatBody = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
const streamBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

// slowUpstream answers every request with a stream that lasts about
// five seconds, long enough to hold concurrency slots.
func slowUpstream(t *testing.T) *testupstream.Server {
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 50 * time.Millisecond})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Text(strings.Repeat("slow ", 100)), true
	})
	return up
}

// openStream starts a streaming request and returns once its first event
// has arrived, or with the refusal's status and body. close ends the
// request from the client's side, as a disconnect would.
func openStream(t *testing.T, g *gateway, key string) (status int, body string, close func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req := newRequest(t, g, "POST", "/v1/chat/completions", key, streamBody).WithContext(ctx)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b := new(strings.Builder)
		_, _ = bufio.NewReader(resp.Body).WriteTo(b)
		resp.Body.Close()
		cancel()
		return resp.StatusCode, b.String(), func() {}
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first stream line %q: %v", line, err)
	}
	return resp.StatusCode, "", func() { cancel(); resp.Body.Close() }
}

// mustOpenStreams opens n streams of key, the i-th through
// gws[i%len(gws)], each of which must be admitted, and closes them when
// the test ends. It returns their close functions, for a test that closes
// one earlier.
func mustOpenStreams(t *testing.T, n int, key string, gws ...*gateway) []func() {
	t.Helper()
	var closers []func()
	for i := range n {
		status, body, closeFn := openStream(t, gws[i%len(gws)], key)
		if status != http.StatusOK {
			t.Fatalf("stream %d: %d %s", i+1, status, body)
		}
		t.Cleanup(closeFn)
		closers = append(closers, closeFn)
	}
	return closers
}

// openStreamBy opens a stream, trying again every interval while it is
// refused, until deadline; then it returns the last refusal.
func openStreamBy(t *testing.T, g *gateway, key string, deadline time.Time, every time.Duration) (status int, body string, close func()) {
	t.Helper()
	for {
		status, body, close = openStream(t, g, key)
		if status == http.StatusOK || time.Now().After(deadline) {
			return status, body, close
		}
		time.Sleep(every)
	}
}

// loadedRedis is the limits option of a test that counts admissions exactly
// on Redis: a Redis timeout a loaded machine meets (the default, 150 ms,
// is what an operator wants from a healthy Redis), so that no admission
// falls back to the in-process limits under fail_open, each node's own,
// which would admit more than the shared limits. The invariant harness
// runs with the same.
const loadedRedis = "redis_timeout 2s"

// switchyardConfig writes Caddyfile.example with extra lines in its
// switchyard block.
func switchyardConfig(t *testing.T, lines ...string) string {
	return withSwitchyardOption(t, strings.Join(lines, "\n\t\t"))
}

func TestBalanceGate(t *testing.T) {
	scriptedBackends(t, func(t *testing.T, up *testupstream.Server, e env) {
		key := newKey(t, e, "broke")
		g := startGateway(t, e)
		for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
			status, h, body := g.do("POST", path, key, chatBody)
			wantError(t, path+" with a zero balance", status, body, http.StatusPaymentRequired, "insufficient_balance", "insufficient_quota")
			if h.Get("X-Ratelimit-Remaining-Requests") != "" {
				t.Error("a request refused by the balance gate reached the rate limiter")
			}
		}
		if n := len(up.Requests()); n != 0 {
			t.Fatalf("refused requests reached the upstream: %d", n)
		}
		mustCLI(t, e, "accounts", "topup", "--account", "broke", "--usd", "5")
		if status, h, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
			t.Fatalf("after a top-up: %d %s", status, body)
		} else if h.Get("X-Ratelimit-Remaining-Requests") != "59" {
			// The refused requests spent none of the 60.
			t.Errorf("remaining %q after the first admitted request, want 59", h.Get("X-Ratelimit-Remaining-Requests"))
		}
	})
}

// TestRateLimitPerRevision: both revisions' defaults are rolling windows,
// so the request after the limit waits until the first of the window
// leaves (close to a minute), while revision B's limit chosen as a rate
// ("requests 60 1m rate") refuses for one second, until the bucket
// refills.
func TestRateLimitPerRevision(t *testing.T) {
	for _, tc := range []struct {
		name     string
		revision string
		config   string // extra lines of the limits block
		limit    int
		rolling  bool
		reset    string // x-ratelimit-reset-requests of the first request
	}{
		{name: "A", revision: "A", limit: 150, rolling: true, reset: "1m0s"},
		{name: "B", revision: "B", limit: 60, rolling: true, reset: "1m0s"},
		{name: "B as a rate", revision: "B", config: "requests 60 1m rate", limit: 60, reset: "1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := scriptedEnv(t, "SWITCHYARD_REVISION", tc.revision)
			key := fundedKey(t, e, "busy")
			other := fundedKey(t, e, "other")
			var g *gateway
			if tc.config != "" {
				g = startGateway(t, e, switchyardConfig(t, "limits {\n\t\t\t"+tc.config+"\n\t\t}"))
			} else {
				g = startGateway(t, e)
			}
			start := time.Now()
			admitted := 0
			var status int
			var h http.Header
			var body string
			for i := 1; i <= 2*tc.limit+10; i++ {
				status, h, body = g.do("GET", "/v1/models", key, "")
				if status != http.StatusOK {
					break
				}
				admitted++
				if h.Get("X-Ratelimit-Limit-Requests") != strconv.Itoa(tc.limit) {
					t.Fatalf("limit header %q", h.Get("X-Ratelimit-Limit-Requests"))
				}
				if i == 1 && h.Get("X-Ratelimit-Reset-Requests") != tc.reset {
					t.Errorf("first request: reset %q, want %q", h.Get("X-Ratelimit-Reset-Requests"), tc.reset)
				}
				// A rate refills while the requests go on; a window does not.
				if got, want := h.Get("X-Ratelimit-Remaining-Requests"), strconv.Itoa(tc.limit-i); tc.rolling && got != want {
					t.Fatalf("request %d: remaining %q, want %q", i, got, want)
				}
			}
			elapsed := time.Since(start)
			wantError(t, fmt.Sprintf("request %d", admitted+1), status, body, http.StatusTooManyRequests, "rate_limit_exceeded", "requests")
			if tc.rolling && admitted != tc.limit || admitted < tc.limit {
				t.Fatalf("admitted %d before the first 429, want %d", admitted, tc.limit)
			}
			ra, err := strconv.Atoi(h.Get("Retry-After"))
			if tc.rolling {
				// The first admission leaves the window a minute after it
				// was made, at least a minute less the time spent so far.
				if least := int(time.Minute.Seconds() - elapsed.Seconds()); err != nil || ra < least || ra > 60 {
					t.Errorf("Retry-After %q after %s, want %d to 60", h.Get("Retry-After"), elapsed, least)
				}
			} else if err != nil || ra != 1 {
				t.Errorf("Retry-After %q, want 1 (one emission interval)", h.Get("Retry-After"))
			}
			if h.Get("X-Ratelimit-Remaining-Requests") != "0" || h.Get("X-Ratelimit-Reset-Requests") == "" {
				t.Errorf("headers on the refusal: %v", h)
			}
			// Limits are per key.
			if status, _, body := g.do("GET", "/v1/models", other, ""); status != http.StatusOK {
				t.Fatalf("another key: %d %s", status, body)
			}
		})
	}
}

func TestConcurrentStreams(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "streamer")
	g := startGateway(t, e)

	closers := mustOpenStreams(t, 5, key, g)
	status, body, _ := openStream(t, g, key)
	if status != http.StatusTooManyRequests || !strings.Contains(body, "Concurrency limit") {
		t.Fatalf("sixth stream: %d %s", status, body)
	}
	// Non-streaming requests need no slot.
	if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
		t.Fatalf("a plain request beside five streams: %d %s", status, body)
	}

	// A client that goes away mid-stream gives its slot back.
	closers[0]()
	status, body, closeFn := openStreamBy(t, g, key, time.Now().Add(5*time.Second), 20*time.Millisecond)
	if status != http.StatusOK {
		t.Fatalf("the disconnected stream's slot was not freed: %d %s", status, body)
	}
	closeFn()
}

func TestLimitsAcrossNodes(t *testing.T) {
	up := slowUpstream(t)
	fast := testupstream.Start(t, demobackend.Options{})
	e := distributedEnv(t, up.URL())
	key := fundedKey(t, e, "burst")
	streamKey := fundedKey(t, e, "streams")
	cfg := switchyardConfig(t, "limits {\n\t\t\t"+loadedRedis+"\n\t\t}")
	g1 := startGateway(t, e.with("SWITCHYARD_UPSTREAM", fast.URL()), cfg)
	g2 := startGateway(t, e.with("SWITCHYARD_UPSTREAM", fast.URL()), cfg)

	// A burst of 100 from both nodes at once: revision B admits 60.
	var admitted, refused atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		g := []*gateway{g1, g2}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", g.base+"/v1/models", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				admitted.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 60 || refused.Load() != 40 {
		t.Fatalf("burst across two nodes: %d admitted, %d refused; want exactly 60 and 40", admitted.Load(), refused.Load())
	}

	// Streams: five open across both nodes, the sixth refused on either.
	s1 := startGateway(t, e, cfg)
	s2 := startGateway(t, e, cfg)
	mustOpenStreams(t, 5, streamKey, s1, s2)
	for i, g := range []*gateway{s1, s2} {
		if status, body, _ := openStream(t, g, streamKey); status != http.StatusTooManyRequests {
			t.Fatalf("sixth stream on node %d: %d %s", i+1, status, body)
		}
	}
}

func TestLeasesOfAKilledNodeExpire(t *testing.T) {
	up := slowUpstream(t)
	e := distributedEnv(t, up.URL())
	cfg := switchyardConfig(t, "limits {\n\t\t\tlease_ttl 2s\n\t\t\t"+loadedRedis+"\n\t\t}")
	key := fundedKey(t, e, "crashy")
	doomed := startGateway(t, e, cfg)
	survivor := startGateway(t, e, cfg)

	mustOpenStreams(t, 5, key, doomed)
	doomed.kill()
	killed := time.Now()
	if status, body, _ := openStream(t, survivor, key); status != http.StatusTooManyRequests {
		t.Fatalf("right after the kill the slots should still be held: %d %s", status, body)
	}
	// The stated bound is the lease TTL; allow scheduling slack on top.
	status, _, closeFn := openStreamBy(t, survivor, key, killed.Add(2*time.Second+3*time.Second), 100*time.Millisecond)
	if status != http.StatusOK {
		t.Fatalf("slots of the killed node not freed %s after the kill (lease_ttl 2s)", time.Since(killed))
	}
	closeFn()
}

// privateRedis runs a redis-server of the test's own on a free port, so
// that the test can stop it.
func privateRedis(t *testing.T) (url string, stop func()) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not installed: run `make test`, which installs it, or apt-get install redis-server")
	}
	addr := testenv.FreeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(path, "--bind", host, "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.SysProcAttr = testenv.KillWithParent()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
	}
	return "redis://" + addr + "/0", stop
}

func TestRedisOutage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		want   int
	}{
		{"fail open", "fail_open", http.StatusOK},
		{"fail closed", "fail_closed", http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := testupstream.Start(t, demobackend.Options{})
			redisURL, stopRedis := privateRedis(t)
			e := distributedEnv(t, up.URL()).with("SWITCHYARD_REDIS_URL", redisURL)
			cfg := switchyardConfig(t, fmt.Sprintf("limits {\n\t\t\trate_policy %s\n\t\t\tstream_policy %s\n\t\t}", tc.policy, tc.policy))
			key := fundedKey(t, e, "outage")
			g := startGateway(t, e, cfg)
			if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusOK {
				t.Fatalf("with Redis up: %d %s", status, body)
			}
			stopRedis()
			for i := 0; i < 20; i++ {
				began := time.Now()
				path, body := "/v1/models", ""
				if i%2 == 1 {
					path, body = "/v1/chat/completions", streamBody
				}
				status, _, respBody := g.do(map[bool]string{true: "GET", false: "POST"}[body == ""], path, key, body)
				// A hang detector, not a performance claim: the limiter's
				// timeout is 150ms, and the breaker skips Redis after a
				// few failures.
				if took := time.Since(began); took > 3*time.Second {
					t.Fatalf("request %d took %s with Redis down", i, took)
				}
				if status != tc.want {
					t.Fatalf("request %d with Redis down: %d %s", i, status, respBody)
				}
				if tc.want == http.StatusServiceUnavailable {
					if _, _, code := errorBody(t, respBody); code != "service_unavailable" {
						t.Fatalf("code %q", code)
					}
				}
			}
		})
	}
}

func TestAdmissionQueue(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	cfg := switchyardConfig(t, "limits {\n\t\t\tqueue 1 {\n\t\t\t\tmax_waiting 1\n\t\t\t\tmax_wait 300ms\n\t\t\t}\n\t\t}")
	key := fundedKey(t, e, "queued")
	g := startGateway(t, e, cfg)

	status, body, closeFn := openStream(t, g, key)
	if status != http.StatusOK {
		t.Fatalf("first stream: %d %s", status, body)
	}
	defer closeFn()

	// The only slot is taken: a second request waits, then gives up.
	began := time.Now()
	status, _, body = g.do("POST", "/v1/chat/completions", key, chatBody)
	wantError(t, "queued request", status, body, http.StatusServiceUnavailable, "server_overloaded", "")
	if time.Since(began) < 300*time.Millisecond {
		t.Fatalf("refused after %s, before max_wait", time.Since(began))
	}

	// Once the slot is free, requests go through again.
	closeFn()
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, _ = g.do("GET", "/v1/models", key, "")
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed after the stream closed: %d", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStreamLimitCannotBeDodged sends streams the probe used to miss: no
// Content-Type, text/plain, a case-variant duplicate key. None may hold a
// stream beyond the limit of five.
func TestStreamLimitCannotBeDodged(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "dodger")
	g := startGateway(t, e)

	type attempt struct{ contentType, body string }
	attempts := []attempt{
		{"", streamBody},
		{"text/plain", streamBody},
		{"application/json", `{"model":"m","stream":true,"Stream":false,"messages":[{"role":"user","content":"hi"}]}`},
		{"application/x-www-form-urlencoded", streamBody},
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	statuses := map[int]int{}
	var cancels []context.CancelFunc
	var bodies []io.Closer
	for i := 0; i < 8; i++ {
		a := attempts[i%len(attempts)]
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", g.base+"/v1/chat/completions", strings.NewReader(a.body))
			req.Header.Set("Authorization", "Bearer "+key)
			if a.contentType != "" {
				req.Header.Set("Content-Type", a.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			if resp.StatusCode == http.StatusOK {
				// Wait for the first event, and keep the stream open
				// until every attempt is in: a stream closed early frees
				// its slot for a later attempt.
				_, _ = bufio.NewReader(resp.Body).ReadString('\n')
			}
			mu.Lock()
			statuses[resp.StatusCode]++
			bodies = append(bodies, resp.Body)
			mu.Unlock()
		})
	}
	wg.Wait()
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
		for _, c := range cancels {
			c()
		}
	}()
	if statuses[http.StatusOK] > 5 {
		t.Fatalf("statuses %v: more than five streams at once", statuses)
	}
	if statuses[http.StatusBadRequest] == 0 {
		t.Errorf("statuses %v: the case-variant duplicate was not refused", statuses)
	}
}
