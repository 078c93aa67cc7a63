package e2e

// The fault suite: two gateway nodes on PostgreSQL and Redis in front of
// a scripted upstream, and one fault at a time: Redis stopped and started
// again, PostgreSQL cut off and restored, an upstream that refuses, hangs,
// cuts streams or sends malformed events and JSON, a node killed in the
// middle of 100 streams and started again, and a blob directory that
// cannot take another byte. After each: no request waited past its
// timeout, no lease or hold outlived its TTL, no blob or row was left
// without the other, and every error a client saw was an envelope of
// docs/errors.md. docs/operations.md ("Faults") describes each outcome.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// faultConfig is Caddyfile.example with lines added to the switchyard
// block and old/new replacements applied (each must match).
func faultConfig(t *testing.T, switchyardLines []string, replace ...string) string {
	t.Helper()
	edits := slices.Clone(replace)
	if len(switchyardLines) > 0 {
		edits = append(edits, "\tswitchyard {", "\tswitchyard {\n\t\t"+strings.Join(switchyardLines, "\n\t\t"))
	}
	return writeConfig(t, exampleConfig(t, edits...))
}

const faultLeaseTTL = 2 * time.Second

var faultLimits = fmt.Sprintf("limits {\n\t\t\tlease_ttl %s\n\t\t}", faultLeaseTTL)

// noLeftovers waits out one lease TTL (plus slack for scheduling) for
// every lease and hold under prefix to be gone.
func noLeftovers(t *testing.T, redisURL, prefix string) {
	t.Helper()
	deadline := time.Now().Add(faultLeaseTTL + 3*time.Second)
	for {
		left := leftovers(t, redisURL, prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leases or holds outlived their TTL (%s): %v", len(left), faultLeaseTTL, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ledgerConsistent checks that the account's balance is the sum of its
// ledger entries and the last entry's running balance.
func ledgerConsistent(t *testing.T, e env, account string) {
	t.Helper()
	st := openStore(t, e)
	acct := accountNamed(t, st, account)
	if b := readLedger(t, st, acct.ID); !b.consistent() || b.balance < 0 {
		t.Fatalf("ledger of %s: entries sum to %d, the balance is %d", account, b.sum, b.balance)
	}
}

// fallbacks sums a node's switchyard_limiter_redis_fallbacks_total.
func fallbacks(t *testing.T, g *gateway) float64 {
	var n float64
	for series, v := range scrape(t, g) {
		if strings.HasPrefix(series, "switchyard_limiter_redis_fallbacks_total") {
			n += v
		}
	}
	return n
}

// TestFaultRedisRestart stops the Redis of a two-node deployment while
// streams are open and starts it again, empty. While it is down every
// request is answered within the limiter's timeout (fail_open: decided in
// process). Once it is back and the breakers have closed, the stream limit
// is again exact across both nodes, and nothing outlives its TTL.
func TestFaultRedisRestart(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 20 * time.Millisecond})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Text(strings.Repeat("tick ", 60)), true
	})
	rds := startRedisProc(t)
	e := distributedEnv(t, up.URL()).with("SWITCHYARD_REDIS_URL", rds.url())
	cfg := faultConfig(t, []string{faultLimits})
	key := fundedKey(t, e, "redis-fault")
	g1, g2 := startGateway(t, e, cfg), startGateway(t, e, cfg)

	// Streams in flight across the outage, on both nodes.
	var wg sync.WaitGroup
	var cut atomic.Int32
	for i := range 4 {
		wg.Add(1)
		go func(g *gateway) {
			defer wg.Done()
			if _, err := streamText(g, key); err != nil {
				cut.Add(1)
			}
		}([]*gateway{g1, g2}[i%2])
	}
	time.Sleep(200 * time.Millisecond)
	rds.stop()
	for i := range 10 {
		g := []*gateway{g1, g2}[i%2]
		path, body, method := "/v1/models", "", "GET"
		if i%3 == 1 {
			path, body, method = "/v1/chat/completions", chatBody, "POST"
		}
		status, resp := timedDo(t, 3*time.Second, newRequest(t, g, method, path, key, body))
		if status != http.StatusOK {
			envelopeCode(t, fmt.Sprintf("request %d with Redis down", i), status, resp)
			t.Fatalf("request %d with Redis down (fail_open): %d %s", i, status, resp)
		}
	}
	rds.start()
	wg.Wait()
	if n := cut.Load(); n != 0 {
		t.Fatalf("%d of 4 streams in flight were cut by the Redis outage", n)
	}

	// The breakers probe Redis again after their cool-down; wait until a
	// request on each node is decided in Redis, not in process.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		before := fallbacks(t, g1) + fallbacks(t, g2)
		g1.do("GET", "/v1/models", key, "")
		g2.do("GET", "/v1/models", key, "")
		if fallbacks(t, g1)+fallbacks(t, g2) == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the limiter still decides in process 10s after Redis came back")
		}
	}

	// Exact again across nodes: five streams (revision B), not ten.
	var closers []func()
	opened := 0
	for i := range 8 {
		status, body, closeFn := openStream(t, []*gateway{g1, g2}[i%2], key)
		switch status {
		case http.StatusOK:
			opened++
			closers = append(closers, closeFn)
		case http.StatusTooManyRequests:
			envelopeCode(t, "stream over the limit", status, body)
		default:
			t.Fatalf("stream %d after the restart: %d %s", i+1, status, body)
		}
	}
	for _, c := range closers {
		c()
	}
	if opened != 5 {
		t.Fatalf("after the restart %d streams were admitted across two nodes, want revision B's 5", opened)
	}
	noLeftovers(t, rds.url(), e["SWITCHYARD_REDIS_PREFIX"])
	ledgerConsistent(t, e, "redis-fault")
}

// TestFaultPostgresRestart cuts every connection between the gateways and
// PostgreSQL, refuses new ones for a while, and restores the link: what a
// database restart looks like from the gateway. During the cut requests
// fail fast with an envelope; after it both nodes serve again, the
// revocation listener has reconnected, and the ledger is consistent.
func TestFaultPostgresRestart(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 10 * time.Millisecond})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Text(strings.Repeat("word ", 50)), true
	})
	e := distributedEnv(t, up.URL())
	dsn := e["SWITCHYARD_POSTGRES_URL"]
	proxy := startCutProxy(t, strings.SplitN(strings.SplitN(dsn, "@", 2)[1], "/", 2)[0])
	gw := e.with("SWITCHYARD_POSTGRES_URL", proxiedDSN(t, dsn, proxy))
	key := fundedKey(t, e, "pg-fault")
	victim := fundedKey(t, e, "pg-victim")
	cfg := faultConfig(t, []string{faultLimits, "key_cache_ttl 10m"})
	g1, g2 := startGateway(t, gw, cfg), startGateway(t, gw, cfg)
	warm(t, key, g1, g2)
	warm(t, victim, g1, g2)

	// A stream is in flight when the link is cut.
	streamDone := make(chan error, 1)
	go func() { _, err := streamText(g1, key); streamDone <- err }()
	time.Sleep(100 * time.Millisecond)
	proxy.setCut(true)
	uncached := newKey(t, e, "pg-fault") // its first lookup needs the database
	sawFailure := false
	for i := range 6 {
		g := []*gateway{g1, g2}[i%2]
		status, body := timedDo(t, 15*time.Second, newRequest(t, g, "POST", "/v1/chat/completions", uncached, chatBody))
		if status == http.StatusOK {
			t.Fatalf("request %d with a key never seen, PostgreSQL cut: 200", i)
		}
		envelopeCode(t, fmt.Sprintf("request %d with PostgreSQL cut", i), status, body)
		sawFailure = true
	}
	if !sawFailure {
		t.Fatal("no request saw the outage")
	}
	if err := <-streamDone; err != nil {
		t.Logf("the stream in flight at the cut: %v", err)
	}
	proxy.setCut(false)

	// Both nodes serve again once their pools reconnect.
	for _, g := range []*gateway{g1, g2} {
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			status, body := timedDo(t, 15*time.Second, newRequest(t, g, "POST", "/v1/chat/completions", uncached, chatBody))
			if status == http.StatusOK {
				break
			}
			envelopeCode(t, "request after the restore", status, body)
			if time.Now().After(deadline) {
				t.Fatalf("still %d 15s after PostgreSQL came back: %s", status, body)
			}
		}
	}

	// The revocation listener reconnected: a revocation made now reaches
	// both caching nodes well within the ten-minute cache.
	revokeOnly(t, e, "pg-victim")
	for _, g := range []*gateway{g1, g2} {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if status, _, _ := g.do("GET", "/v1/models", victim, ""); status == http.StatusUnauthorized {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a revocation after the restore did not reach a caching node: its listener did not reconnect")
			}
		}
	}
	noLeftovers(t, e["SWITCHYARD_REDIS_URL"], e["SWITCHYARD_REDIS_PREFIX"])
	ledgerConsistent(t, e, "pg-fault")
}

// rawUpstream wraps the scripted upstream: chat requests whose last user
// message names a fault get that fault, raw on the wire; everything else
// goes to the scripted server.
func rawUpstream(t *testing.T) (url string, script *testupstream.Server) {
	script = testupstream.New(demobackend.Options{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		flush := func() { w.(http.Flusher).Flush() }
		chunk := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"partial "},"finish_reason":null}]}` + "\n\n"
		switch {
		case bytes.Contains(body, []byte("#stall")):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, chunk)
			flush()
			<-r.Context().Done() // says nothing more, ever
		case bytes.Contains(body, []byte("#badsse")):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, chunk+"data: {\"choices\":[{\"delta\":{\"content\":\"x\"\n\ndata: [DONE]\n\n")
		case bytes.Contains(body, []byte("#badjson")):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","choices":[{"message":{"role":"assis`)
		default:
			script.ServeHTTP(w, r)
		}
	}))
	srv.Start()
	t.Cleanup(srv.CloseClientConnections)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", script
}

func faultChat(stream bool, text string) string {
	return fmt.Sprintf(`{"model":"m","stream":%t,"messages":[{"role":"user","content":%q}]}`, stream, text)
}

// TestFaultUpstream: an upstream that refuses connections, hangs before
// or during an answer, cuts streams, or sends malformed events or JSON.
// Every request ends within its timeout with an envelope (before the
// headers) or an error frame (in a /v3 stream); no slot or hold is left.
func TestFaultUpstream(t *testing.T) {
	upURL, script := rawUpstream(t)
	e := distributedEnv(t, upURL)
	key := fundedKey(t, e, "upstream-fault")
	short := faultConfig(t, []string{faultLimits},
		"response_header_timeout 120s", "response_header_timeout 1s\n\t\t\tstream_idle_timeout 1s",
		"\t\tswitchyard_chat\n", "\t\tswitchyard_chat {\n\t\t\tfirst_byte_timeout 1s\n\t\t\tidle_timeout 1s\n\t\t}\n")
	g := startGateway(t, e, short)
	const limit = 8 * time.Second // every timeout above is 1s

	v1 := func(t *testing.T, stream bool, text string) (int, string) {
		return timedDo(t, limit, newRequest(t, g, "POST", "/v1/chat/completions", key, faultChat(stream, text)))
	}
	v3 := func(t *testing.T, stream bool, text string) (int, string) {
		return timedDo(t, limit, newRequest(t, g, "POST", "/v3/chat/completions", key, faultChat(stream, text)))
	}
	after := func(t *testing.T) {
		t.Helper()
		noLeftovers(t, e["SWITCHYARD_REDIS_URL"], e["SWITCHYARD_REDIS_PREFIX"])
	}

	t.Run("hangs before answering", func(t *testing.T) {
		script.Enqueue(demobackend.Reply{Content: "late", Delay: time.Minute}, demobackend.Reply{Content: "late", Delay: time.Minute},
			demobackend.Reply{Content: "late", Delay: time.Minute})
		for _, call := range []func(*testing.T, bool, string) (int, string){v1, v3} {
			status, body := call(t, false, "hello")
			envelopeCode(t, "hung upstream", status, body)
		}
		status, body := v3(t, true, "hello")
		if status == http.StatusOK {
			streamErrorFrame(t, "hung upstream, /v3 stream", body)
		} else {
			envelopeCode(t, "hung upstream, /v3 stream", status, body)
		}
		script.Reset()
		after(t)
	})

	t.Run("hangs mid-stream", func(t *testing.T) {
		status, body := v1(t, true, "#stall")
		if status != http.StatusOK || !strings.Contains(body, "partial") {
			t.Fatalf("/v1: %d %s", status, body)
		}
		status, body = v3(t, true, "#stall")
		if status != http.StatusOK {
			t.Fatalf("/v3: %d %s", status, body)
		}
		streamErrorFrame(t, "/v3 stalled stream", body)
		after(t)
	})

	t.Run("cuts streams", func(t *testing.T) {
		script.Enqueue(demobackend.Reply{Content: strings.Repeat("a ", 20), BreakAfter: 3},
			demobackend.Reply{Content: strings.Repeat("a ", 20), BreakAfter: 3},
			demobackend.Reply{Content: strings.Repeat("a ", 20), BreakAfter: 3})
		status, body := v1(t, true, "cut")
		if status != http.StatusOK || strings.Contains(body, "[DONE]") {
			t.Fatalf("/v1 cut stream: %d %s", status, body)
		}
		status, body = v3(t, true, "cut")
		if status != http.StatusOK {
			t.Fatalf("/v3: %d %s", status, body)
		}
		streamErrorFrame(t, "/v3 cut stream", body)
		status, body = v1(t, false, "cut")
		if status == http.StatusOK && strings.HasSuffix(strings.TrimSpace(body), "}") {
			t.Fatalf("/v1 cut JSON arrived whole: %s", body)
		}
		script.Reset()
		after(t)
	})

	t.Run("malformed events and JSON", func(t *testing.T) {
		// /v1 passes bytes through unchanged: the client gets what the
		// upstream sent, and the request ends.
		if status, body := v1(t, true, "#badsse"); status != http.StatusOK || !strings.Contains(body, "partial") {
			t.Fatalf("/v1 malformed events: %d %s", status, body)
		}
		if status, _ := v1(t, false, "#badjson"); status != http.StatusOK {
			t.Fatalf("/v1 malformed JSON: %d", status)
		}
		status, body := v3(t, true, "#badsse")
		if status != http.StatusOK {
			envelopeCode(t, "/v3 malformed events", status, body)
		} else {
			streamErrorFrame(t, "/v3 malformed events", body)
		}
		status, body = v3(t, false, "#badjson")
		envelopeCode(t, "/v3 malformed JSON", status, body)
		after(t)
	})

	t.Run("refuses connections", func(t *testing.T) {
		refused := distributedEnv(t, "http://"+closedAddr(t)+"/v1")
		rkey := fundedKey(t, refused, "refused")
		rg := startGateway(t, refused, short)
		for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
			for _, stream := range []bool{false, true} {
				status, body := timedDo(t, limit, newRequest(t, rg, "POST", path, rkey, faultChat(stream, "hi")))
				if status == http.StatusOK && path == "/v3/chat/completions" && stream {
					streamErrorFrame(t, "refused upstream", body)
					continue
				}
				envelopeCode(t, "refused upstream "+path, status, body)
			}
		}
		noLeftovers(t, refused["SWITCHYARD_REDIS_URL"], refused["SWITCHYARD_REDIS_PREFIX"])
	})
	ledgerConsistent(t, e, "upstream-fault")
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string { return testenv.FreeAddr(t) }

// TestFaultKillMidHundredStreams kills a node with SIGKILL while it relays
// 100 streams of one key, and starts it again. Within the lease TTL the
// two nodes together admit exactly 100 streams of that key again: the
// killed node's slots and holds are gone, none twice.
func TestFaultKillMidHundredStreams(t *testing.T) {
	const streams = 100
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 50 * time.Millisecond})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Text(strings.Repeat("slow ", 300)), true
	})
	e := distributedEnv(t, up.URL())
	cfg := faultConfig(t, []string{fmt.Sprintf("limits {\n\t\t\tlease_ttl %s\n\t\t\tstreams %d\n\t\t\trequests 1000 1m\n\t\t}", faultLeaseTTL, streams)})
	key := fundedKey(t, e, "killed")
	doomed, survivor := startGateway(t, e, cfg), startGateway(t, e, cfg)

	openMany := func(g *gateway, n int) (ok int, closers []func()) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, body, c := openStream(t, g, key)
				mu.Lock()
				defer mu.Unlock()
				if status == http.StatusOK {
					ok++
					closers = append(closers, c)
				} else if status != http.StatusTooManyRequests {
					t.Errorf("stream: %d %s", status, body)
				}
			}()
		}
		wg.Wait()
		return ok, closers
	}
	if n, _ := openMany(doomed, streams); n != streams {
		t.Fatalf("%d of %d streams opened on the doomed node", n, streams)
	}
	doomed.kill()
	killed := time.Now()
	restarted := startGateway(t, doomed.env, cfg)

	// Within the TTL every slot is free again, on both nodes together.
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	time.Sleep(time.Until(killed.Add(faultLeaseTTL)))
	total := 0
	for deadline := killed.Add(faultLeaseTTL + 3*time.Second); total < streams; time.Sleep(100 * time.Millisecond) {
		want := streams - total
		n1, c1 := openMany(survivor, want/2)
		n2, c2 := openMany(restarted, want-want/2)
		total += n1 + n2
		closers = append(append(closers, c1...), c2...)
		if total < streams && time.Now().After(deadline) {
			t.Fatalf("%s after the kill only %d of %d slots were free again", time.Since(killed).Round(time.Millisecond), total, streams)
		}
	}
	if status, body, c := openStream(t, restarted, key); status != http.StatusTooManyRequests {
		c()
		t.Fatalf("stream %d of a key limited to %d: %d %s", streams+1, streams, status, body)
	}
	for _, c := range closers {
		c()
	}
	closers = nil

	// Each stream the clients closed is charged once, the killed ones never.
	for wait := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := len(charges(t, e, "killed"))
		if got == streams {
			break
		}
		if got > streams || time.Now().After(wait) {
			t.Fatalf("%d charges, want %d: one per stream closed on a live node", got, streams)
		}
	}
	noLeftovers(t, e["SWITCHYARD_REDIS_URL"], e["SWITCHYARD_REDIS_PREFIX"])
	ledgerConsistent(t, e, "killed")
}

// TestFaultBlobDirFull runs a node whose every file write past 256 KiB
// fails (RLIMIT_FSIZE, set with prlimit: the write returns EFBIG, as it
// returns ENOSPC on a full disk, through the same error path). An upload
// that does not fit is refused with an envelope and leaves neither a blob,
// nor a staged file, nor a row; a small one still succeeds.
func TestFaultBlobDirFull(t *testing.T) {
	prlimit := lookPath(t, "prlimit")
	e := distributedEnv(t, "http://127.0.0.1:1/v1")
	key := fundedKey(t, e, "full-disk")
	wrapper := filepath.Join(t.TempDir(), "switchyard-fsize")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --fsize=%d -- %s \"$@\"\n", prlimit, 256<<10, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	// startGateway runs bin; no e2e test runs in parallel, so swapping it
	// for the one start is safe.
	real := bin
	bin = wrapper
	g := startGateway(t, e)
	bin = real

	upload := func(size int) (int, string) {
		boundary := "fault-boundary"
		content := strings.Repeat("spreadsheet,row\n", size/16)
		req := newRequest(t, g, "POST", "/v3/files", key, "")
		req.Body = io.NopCloser(strings.NewReader(multipartBody(boundary, "big.csv", content)))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		return timedDo(t, 30*time.Second, req)
	}
	status, body := upload(1 << 20)
	if status < 500 {
		t.Fatalf("a 1 MiB upload past the file-size limit: %d %s", status, body)
	}
	envelopeCode(t, "upload onto a full disk", status, body)
	if left := blobFiles(t, e["SWITCHYARD_DATA_DIR"]); len(left) != 0 {
		t.Fatalf("the failed upload left blobs or staged files: %v", left)
	}
	if n := fileRows(t, e["SWITCHYARD_POSTGRES_URL"]); n != 0 {
		t.Fatalf("the failed upload left %d file rows", n)
	}
	if status, body := upload(64 << 10); status != http.StatusOK {
		t.Fatalf("a 64 KiB upload after the failure: %d %s", status, body)
	}
	if left := blobFiles(t, e["SWITCHYARD_DATA_DIR"]); len(left) != 1 {
		t.Fatalf("after one stored upload the blob dir holds %v", left)
	}
	if n := fileRows(t, e["SWITCHYARD_POSTGRES_URL"]); n != 1 {
		t.Fatalf("after one stored upload there are %d file rows", n)
	}
}
