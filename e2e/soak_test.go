//go:build soak

package e2e

// The soak suite, run by `make soak` (scripts/soak.sh), never by `make
// test`: SOAK_DURATION (default 10m) of
//
//   - TestSoakStreams: 1,000 concurrent streams, /v1 and /v3, through one
//     node, sampling its RSS (/proc/PID/status) and goroutines (Caddy's
//     admin /debug/pprof/goroutine). Bound: the peak of the last quarter
//     of the run may exceed the peak of the second quarter (after
//     warm-up) by at most 25% plus 32 MiB of RSS, and 25% plus 200
//     goroutines; ten seconds after the load stops the goroutines are back
//     within 50 of the idle count before it.
//   - TestSoakMixed: chat (/v3, streamed and not), /v1 streams and file
//     uploads, lists and deletes from 50 keys of 10 accounts on two nodes
//     sharing PostgreSQL and Redis, with tight limits, checking that each
//     held exactly: no key ever had more than its streams open at the
//     upstream, no key had more than its rate admitted in any rolling
//     window, no account's balance went below zero or its files above
//     the quota, the ledger sums to the balance, blobs match file rows.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	s := os.Getenv("SOAK_DURATION")
	if s == "" {
		return 10 * time.Minute
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 20*time.Second {
		t.Fatalf("SOAK_DURATION=%q: want a duration of at least 20s", s)
	}
	return d
}

func soakInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// sample is one reading of a node's resources.
type sample struct {
	at         time.Duration
	rss        int64 // bytes
	goroutines int
	// pooled are the goroutines of idle pooled HTTP connections (two per
	// connection the gateway keeps to its upstream, one per client
	// keep-alive connection): bounded by the pools, not by the load.
	pooled int
}

func readSample(t *testing.T, g *gateway, began time.Time) sample {
	t.Helper()
	s := sample{at: time.Since(began)}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			s.rss = kb << 10
		}
	}
	resp, err := http.Get("http://" + g.admin + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, _ := br.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "goroutine profile: total")))
	if err != nil {
		t.Fatalf("goroutine profile %q: %v", line, err)
	}
	s.goroutines = n
	// Groups: "N @ 0x..." then "#\t0x... function" lines, blank-separated.
	rest, _ := io.ReadAll(br)
	for _, group := range strings.Split(string(rest), "\n\n") {
		count, _, ok := strings.Cut(group, " @ ")
		if !ok {
			continue
		}
		if strings.Contains(group, "net/http.(*persistConn).readLoop") || strings.Contains(group, "net/http.(*persistConn).writeLoop") ||
			(strings.Contains(group, "net/http.(*conn).serve") && !strings.Contains(group, "net/http.(*connReader).backgroundRead") &&
				strings.Contains(group, "bufio.(*Reader).Peek")) {
			c, _ := strconv.Atoi(strings.TrimSpace(count))
			s.pooled += c
		}
	}
	return s
}

func peak(samples []sample, from, to time.Duration) sample {
	var p sample
	for _, s := range samples {
		if s.at >= from && s.at < to {
			p.rss = max(p.rss, s.rss)
			p.goroutines = max(p.goroutines, s.goroutines)
		}
	}
	return p
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// fund credits an account by adjustment, beyond the CLI's top-up bounds.
func fund(t *testing.T, e env, account string, cents int64) {
	t.Helper()
	st := openStore(t, e)
	acct := accountNamed(t, st, account)
	credit(t, st, acct.ID, cents, "soak-"+account)
}

func TestSoakStreams(t *testing.T) {
	d := soakDuration(t)
	streams := soakInt(t, "SOAK_STREAMS", 1000)
	tokenDelay := time.Duration(soakInt(t, "SOAK_TOKEN_MS", 100)) * time.Millisecond
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: tokenDelay})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Text(strings.Repeat("tok ", 30)), true
	})
	e := embeddedEnv(t, up.URL())
	key := newKey(t, e, "soak")
	fund(t, e, "soak", 100_000_000)
	g := startGateway(t, e, switchyardConfig(t,
		fmt.Sprintf("limits {\n\t\t\tstreams %d\n\t\t\trequests 100000000 1m\n\t\t}", streams)))

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, MaxIdleConns: streams}}
	began := time.Now()
	idle := readSample(t, g, began)
	ctx, stop := context.WithDeadline(context.Background(), began.Add(d))
	defer stop()

	var done, failed atomic.Int64
	var failMu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := []string{"/v1/chat/completions", "/v3/chat/completions"}[i%2]
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", g.base+path, strings.NewReader(streamBody))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case ctx.Err() != nil:
				case err != nil || resp.StatusCode != http.StatusOK || !bytes.HasSuffix(bytes.TrimSpace(b), []byte("data: [DONE]")) ||
					bytes.Contains(b, []byte(`"error"`)):
					failed.Add(1)
					failMu.Lock()
					if len(failures) < 5 {
						failures = append(failures, fmt.Sprintf("%s %d %v %.300s", path, resp.StatusCode, err, b))
					}
					failMu.Unlock()
				default:
					done.Add(1)
				}
			}
		}()
	}

	var samples []sample
	tick := time.NewTicker(5 * time.Second)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			s := readSample(t, g, began)
			samples = append(samples, s)
			t.Logf("%6s rss %s goroutines %d streams done %d failed %d", s.at.Round(time.Second), mib(s.rss), s.goroutines, done.Load(), failed.Load())
		}
	}
	tick.Stop()
	wg.Wait()

	client.CloseIdleConnections()
	var after sample
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		after = readSample(t, g, began)
		if after.goroutines-after.pooled <= idle.goroutines+50 || time.Now().After(deadline) {
			break
		}
	}
	warm := peak(samples, d/4, d/2)
	last := peak(samples, d*3/4, d+time.Minute)
	t.Logf("idle before: rss %s, %d goroutines; second quarter peak: rss %s, %d goroutines; last quarter peak: rss %s, %d goroutines; 10s after: rss %s, %d goroutines (%d of idle pooled connections); %d streams completed (%.0f/s), %d failed",
		mib(idle.rss), idle.goroutines, mib(warm.rss), warm.goroutines, mib(last.rss), last.goroutines,
		mib(after.rss), after.goroutines, after.pooled, done.Load(), float64(done.Load())/d.Seconds(), failed.Load())
	if n := failed.Load(); n > 0 {
		t.Errorf("%d streams failed; first: %v", n, failures)
	}
	if last.rss > warm.rss*5/4+32<<20 {
		t.Errorf("RSS grew from %s to %s: beyond 125%% + 32 MiB", mib(warm.rss), mib(last.rss))
	}
	if last.goroutines > warm.goroutines*5/4+200 {
		t.Errorf("goroutines grew from %d to %d: beyond 125%% + 200", warm.goroutines, last.goroutines)
	}
	if after.goroutines-after.pooled > idle.goroutines+50 {
		t.Errorf("10s after the load, %d goroutines (%d of them idle pooled connections) against %d before it: a leak",
			after.goroutines, after.pooled, idle.goroutines)
	}
}

// soakUpstream wraps the scripted upstream and counts, per soak key, the
// streams in flight at the upstream: from the request's arrival (after
// the gateway admitted it) to just before the write that ends it (before
// the gateway can release its slot). That interval lies inside the
// gateway's own, so a count above the limit is a real breach.
type soakUpstream struct {
	script *testupstream.Server
	mu     sync.Mutex
	open   map[string]int
	worst  map[string]int
}

var soakMarker = regexp.MustCompile(`soak-key=(\d+) stream=1`)

func (u *soakUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	m := soakMarker.FindSubmatch(body)
	if m == nil {
		u.script.ServeHTTP(w, r)
		return
	}
	key := string(m[1])
	u.mu.Lock()
	u.open[key]++
	u.worst[key] = max(u.worst[key], u.open[key])
	u.mu.Unlock()
	ew := &endWriter{ResponseWriter: w, end: func() {
		u.mu.Lock()
		u.open[key]--
		u.mu.Unlock()
	}}
	u.script.ServeHTTP(ew, r)
	ew.finish()
}

type endWriter struct {
	http.ResponseWriter
	end  func()
	once sync.Once
}

func (w *endWriter) finish() { w.once.Do(w.end) }

func (w *endWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("[DONE]")) || bytes.Contains(p, []byte(`"finish_reason":"stop"`)) {
		w.finish()
	}
	return w.ResponseWriter.Write(p)
}

func (w *endWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// admitted is one request a key got a 2xx for, with the client's times
// around the gateway's decision: sent before it, headers after it.
type admitted struct{ sent, headers time.Time }

func TestSoakMixed(t *testing.T) {
	d := soakDuration(t)
	const (
		accounts       = 10
		keysPerAccount = 5
		workersPerKey  = 3
		rateLimit      = 20
		ratePeriod     = 10 * time.Second
		streamLimit    = 2
		storedFiles    = 3
		balanceCents   = 300
	)
	script := testupstream.New(demobackend.Options{InterTokenDelay: 20 * time.Millisecond})
	usage := demobackend.Usage{PromptTokens: 1000, CompletionTokens: 200, TotalTokens: 1200} // 1 cent
	script.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return demobackend.Reply{Content: strings.Repeat("mixed ", 20), Usage: &usage}, true
	})
	counter := &soakUpstream{script: script, open: map[string]int{}, worst: map[string]int{}}
	srv := httptest.NewServer(counter)
	t.Cleanup(srv.Close)

	e := distributedEnv(t, srv.URL+"/v1")
	// Limits are exact while Redis decides them. Under fail_open a Redis
	// call that passes redis_timeout is decided in process, by design
	// not exactly (docs/limits.md); on a loaded two-core machine the
	// default 150ms is passed, so the soak allows Redis 2s and then
	// checks that no decision fell back.
	cfg := switchyardConfig(t, fmt.Sprintf("limits {\n\t\t\trequests %d %s\n\t\t\tstreams %d\n\t\t\tstored_files %d\n\t\t\tredis_timeout 2s\n\t\t}",
		rateLimit, ratePeriod, streamLimit, storedFiles))
	var keys []string
	var owner []string
	for a := range accounts {
		name := fmt.Sprintf("soak%d", a)
		for range keysPerAccount {
			keys = append(keys, newKey(t, e, name))
			owner = append(owner, name)
		}
		fund(t, e, name, balanceCents)
	}
	nodes := []*gateway{startGateway(t, e, cfg), startGateway(t, e, cfg)}
	st := openStore(t, e)

	began := time.Now()
	ctx, stop := context.WithDeadline(context.Background(), began.Add(d))
	defer stop()
	var mu sync.Mutex
	admits := make([][]admitted, len(keys))
	statuses := map[string]int{}
	var unexpected []string
	record := func(k int, sent, headers time.Time, path string, status int, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		code := ""
		if status >= 400 {
			code = envelopeCodeOf(body)
		}
		statuses[fmt.Sprintf("%s %d %s", path, status, code)]++
		switch {
		case status < 300:
			admits[k] = append(admits[k], admitted{sent, headers})
		case status == 429 && code == "rate_limit_exceeded", status == 402 && code == "insufficient_balance",
			status == 409 && code == "max_files_reached":
		default:
			if len(unexpected) < 10 {
				unexpected = append(unexpected, fmt.Sprintf("%s %d %.300s", path, status, body))
			}
		}
	}

	var wg sync.WaitGroup
	for k := range keys {
		for w := range workersPerKey {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewPCG(uint64(k), uint64(w)))
				var files []string
				for ctx.Err() == nil {
					g := nodes[rnd.IntN(2)]
					var method, path, ctype, body string
					switch op := rnd.IntN(10); {
					case op < 3:
						method, path = "POST", "/v1/chat/completions"
						body = fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"user","content":"soak-key=%d stream=1"}]}`, k)
					case op < 5:
						method, path = "POST", "/v3/chat/completions"
						body = fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"user","content":"soak-key=%d stream=1"}]}`, k)
					case op < 6:
						method, path = "POST", "/v3/chat/completions"
						body = fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"soak-key=%d stream=0"}]}`, k)
					case op < 8:
						method, path = "POST", "/v3/files"
						ctype = "multipart/form-data; boundary=soak"
						body = multipartBody("soak", "notes.txt", strings.Repeat("soak notes\n", 100+rnd.IntN(1000)))
					case op < 9 && len(files) > 0:
						method, path = "DELETE", "/v3/files/"+files[0]
						files = files[1:]
					default:
						method, path = "GET", "/v3/files"
					}
					req, _ := http.NewRequestWithContext(ctx, method, g.base+path, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+keys[k])
					if ctype == "" && body != "" {
						ctype = "application/json"
					}
					if ctype != "" {
						req.Header.Set("Content-Type", ctype)
					}
					sent := time.Now()
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						continue // only when the run ends
					}
					headers := time.Now()
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if ctx.Err() != nil {
						return
					}
					route := path
					if strings.HasPrefix(route, "/v3/files/") {
						route = "/v3/files/{id}"
					}
					record(k, sent, headers, method+" "+route, resp.StatusCode, b)
					if path == "/v3/files" && method == "POST" && resp.StatusCode == 200 {
						if m := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(b); m != nil {
							files = append(files, string(m[1]))
						}
					}
				}
			}()
		}
	}

	// Balances and file counts, sampled while the load runs.
	acctIDs := map[string]string{}
	for a := range accounts {
		acct, err := st.AccountByName(context.Background(), fmt.Sprintf("soak%d", a))
		if err != nil {
			t.Fatal(err)
		}
		acctIDs[acct.Name] = acct.ID
	}
	tick := time.NewTicker(time.Second)
	minBalance, maxFiles := int64(balanceCents), 0
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			for name, id := range acctIDs {
				bal, err := st.Balance(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				minBalance = min(minBalance, bal)
				if bal < 0 {
					t.Errorf("%s's balance is %d cents", name, bal)
				}
				u, err := st.Usage(context.Background(), id, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				maxFiles = max(maxFiles, u.Files)
				if u.Files > storedFiles {
					t.Errorf("%s holds %d files, quota %d", name, u.Files, storedFiles)
				}
			}
		}
	}
	tick.Stop()
	wg.Wait()

	// Streams: never more than the limit at the upstream.
	worst := 0
	for k, n := range counter.worst {
		worst = max(worst, n)
		if n > streamLimit {
			t.Errorf("key %s had %d streams at the upstream at once, limit %d", k, n, streamLimit)
		}
	}
	// Rate: no rolling window held more than the limit. Request i was
	// admitted in [sent_i, headers_i]; rateLimit+1 requests whose
	// intervals all fit in one period are a breach for sure.
	total := 0
	for k, as := range admits {
		total += len(as)
		slices.SortFunc(as, func(a, b admitted) int { return a.headers.Compare(b.headers) })
		for i := 0; i+rateLimit < len(as); i++ {
			first := as[i].sent
			for _, a := range as[i : i+rateLimit+1] {
				if a.sent.Before(first) {
					first = a.sent
				}
			}
			if as[i+rateLimit].headers.Sub(first) < ratePeriod {
				t.Errorf("key %d: %d requests admitted within %s, limit %d per %s", k, rateLimit+1,
					as[i+rateLimit].headers.Sub(first), rateLimit, ratePeriod)
				break
			}
		}
	}
	var fellBack float64
	for _, g := range nodes {
		fellBack += fallbacks(t, g)
	}
	t.Logf("%d requests admitted over %s; lowest balance %d cents; most files %d; most streams of a key at the upstream %d",
		total, d, minBalance, maxFiles, worst)
	var lines []string
	for s, n := range statuses {
		lines = append(lines, fmt.Sprintf("%6d  %s", n, s))
	}
	slices.Sort(lines)
	t.Logf("answers:\n%s", strings.Join(lines, "\n"))
	if len(unexpected) > 0 {
		t.Errorf("answers outside the limits' envelopes: %v", unexpected)
	}
	if fellBack > 0 {
		t.Errorf("%v limit decisions fell back to in-process limits (Redis slower than redis_timeout): the limits above were not all decided in Redis", fellBack)
	}
	for name := range acctIDs {
		ledgerConsistent(t, e, name)
	}
	if minBalance > 0 {
		t.Logf("no account ran dry: the balance limit was not exercised (run longer)")
	}
}

// envelopeCodeOf is the code of an error envelope, or "".
func envelopeCodeOf(b []byte) string {
	m := regexp.MustCompile(`"code":"([^"]*)"`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}
