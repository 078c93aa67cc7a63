package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// scenario is one kind of request. The /v3 scenarios have no direct or
// plain-Caddy equivalent (the backend speaks only /v1): their baseline is
// the /v1 request the gateway itself sends the backend, a stream with
// usage whether the client asked for one or not, with the gateway's
// system prompt and tool schemas (captureBaselines records it), sent
// straight or through plain Caddy.
type scenario struct {
	name   string
	path   string
	body   string
	stream bool
	// basePath and baseBody are what the direct and plain-Caddy targets
	// are sent.
	basePath, baseBody string
}

const (
	v1JSON = `{"model":"svc-3","messages":[{"role":"user","content":"Benchmark me"}]}`
	v1SSE  = `{"model":"svc-3","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Benchmark me"}]}`
	v3JSON = `{"model":"svc-3","messages":[{"role":"user","content":"Benchmark me"}]}`
	v3SSE  = `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Benchmark me"}]}`
)

var scenarios = []scenario{
	{name: "/v1 JSON", path: "/v1/chat/completions", body: v1JSON},
	{name: "/v1 SSE", path: "/v1/chat/completions", body: v1SSE, stream: true},
	// The gateway streams every backend call, a /v3 JSON answer's too:
	// that stream is the baseline of both /v3 scenarios. baseBody is
	// replaced by the request the gateway sends before the run.
	{name: "/v3 JSON", path: "/v3/chat/completions", body: v3JSON, basePath: "/v1/chat/completions", baseBody: v1SSE},
	{name: "/v3 SSE", path: "/v3/chat/completions", body: v3SSE, stream: true, basePath: "/v1/chat/completions", baseBody: v1SSE},
}

// slug is s's name in file names: "v1-json", "v3-sse".
func (s scenario) slug() string {
	return strings.ToLower(strings.NewReplacer("/", "", " ", "-").Replace(s.name))
}

// request returns what target t is sent for s.
func (s scenario) request(t *target) (path, body string) {
	if t.baseline && s.basePath != "" {
		return s.basePath, s.baseBody
	}
	return s.path, s.body
}

// sample is one request's measurements.
type sample struct {
	total, ttfb time.Duration
	chunks      int
}

// cell is one target's measurement of one scenario at one concurrency in
// one round.
type cell struct {
	p50, p99, ttfb50, ttfb99 time.Duration
	rps                      float64
	chunks                   float64 // data events per response, mean
	n, errors                int
	// cpu is the user and system time of the target's process per
	// request served in the measured period, in µs (the backend's for
	// direct); NaN when not read.
	cpu float64
}

// measure runs s against t from conc clients for warm (discarded), then
// for dur, each client sending its next request when the last one ended.
func measure(t *target, s scenario, conc int, warm, dur time.Duration) (cell, error) {
	if warm > 0 {
		if _, _, err := drive(t, s, conc, warm); err != nil {
			return cell{}, err
		}
	}
	cpuBefore, cpuErr := t.cpuTime()
	samples, errs, err := drive(t, s, conc, dur)
	if err != nil {
		return cell{}, err
	}
	cpuAfter, err := t.cpuTime()
	if err != nil || cpuErr != nil {
		cpuAfter, cpuBefore = 0, 0
	}
	if len(samples) == 0 {
		return cell{}, fmt.Errorf("%s %s c=%d: every request failed (%d errors)", t.name, s.name, conc, errs)
	}
	totals := make([]time.Duration, len(samples))
	ttfbs := make([]time.Duration, len(samples))
	chunks := 0
	for i, x := range samples {
		totals[i], ttfbs[i] = x.total, x.ttfb
		chunks += x.chunks
	}
	slices.Sort(totals)
	slices.Sort(ttfbs)
	return cell{
		p50: pct(totals, 50), p99: pct(totals, 99),
		ttfb50: pct(ttfbs, 50), ttfb99: pct(ttfbs, 99),
		rps:    float64(len(samples)) / dur.Seconds(),
		chunks: float64(chunks) / float64(len(samples)),
		n:      len(samples), errors: errs,
		cpu: cpuPer(cpuAfter-cpuBefore, len(samples)),
	}, nil
}

// cpuPer is used CPU time per request in µs; NaN for none read.
func cpuPer(used time.Duration, requests int) float64 {
	if used <= 0 || requests == 0 {
		return math.NaN()
	}
	return us(used) / float64(requests)
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := len(sorted) * p / 100
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// drive sends requests from conc clients until dur has passed. The first
// error is reported only when it is not a plain failed request.
func drive(t *target, s scenario, conc int, dur time.Duration) ([]sample, int, error) {
	deadline := time.Now().Add(dur)
	var (
		mu      sync.Mutex
		all     []sample
		errs    int
		lastErr error
		wg      sync.WaitGroup
	)
	for range conc {
		wg.Go(func() {
			var mine []sample
			bad := 0
			var last error
			for time.Now().Before(deadline) {
				x, err := once(t, s)
				if err != nil {
					bad++
					last = err
					continue
				}
				mine = append(mine, x)
			}
			mu.Lock()
			all = append(all, mine...)
			errs += bad
			if last != nil {
				lastErr = last
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(all) == 0 && lastErr != nil {
		return nil, errs, fmt.Errorf("%s %s: %v", t.name, s.name, lastErr)
	}
	return all, errs, nil
}

var dataPrefix = []byte("data:")

// once sends one request and reads the response to its end, timing the
// first byte of the body and counting the data events of a stream.
func once(t *target, s scenario) (sample, error) {
	path, body := s.request(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, strings.NewReader(body))
	if err != nil {
		return sample{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.key != "" {
		req.Header.Set("Authorization", "Bearer "+t.key)
	}
	t0 := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	if _, err := br.Peek(1); err != nil {
		return sample{}, fmt.Errorf("status %d, empty body: %v", resp.StatusCode, err)
	}
	x := sample{ttfb: time.Since(t0)}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(br, 512))
		return sample{}, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	if !s.stream {
		if _, err := io.Copy(io.Discard, br); err != nil {
			return sample{}, err
		}
	} else {
		for {
			line, err := br.ReadSlice('\n')
			if bytes.HasPrefix(line, dataPrefix) && !bytes.Contains(line, []byte("[DONE]")) {
				x.chunks++
			}
			if err == io.EOF {
				break
			}
			if err != nil && err != bufio.ErrBufferFull {
				return sample{}, err
			}
		}
	}
	x.total = time.Since(t0)
	return x, nil
}

// count sends n requests of s to t, one at a time, for the round-trip
// counts.
func count(t *target, s scenario, n int) error {
	for range n {
		if _, err := once(t, s); err != nil {
			return fmt.Errorf("%s %s: %v", t.name, s.name, err)
		}
	}
	return nil
}
