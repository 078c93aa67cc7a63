package main

import (
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy/limits"
)

// TestReportBudgetLines: the report prints every budget line with its
// verdict per mode, judged on the numbers it was given.
func TestReportBudgetLines(t *testing.T) {
	r := newResults()
	µs := time.Microsecond
	for range 3 {
		r.add("/v1 JSON", 1, "plain Caddy", cell{p50: 300 * µs, p99: 600 * µs, rps: 3000, cpu: 100})
		r.add("/v1 JSON", 1, "Switchyard embedded", cell{p50: 340 * µs, p99: 900 * µs, rps: 2800, cpu: 140})
		r.add("/v1 JSON", 1, "Switchyard distributed", cell{p50: 400 * µs, p99: 1000 * µs, rps: 2000, cpu: 160})
		r.add("/v1 JSON", 32, "plain Caddy", cell{p50: 2 * time.Millisecond, rps: 10000, cpu: 90})
		r.add("/v1 JSON", 32, "Switchyard embedded", cell{p50: 2 * time.Millisecond, rps: 9000, cpu: 101})
		r.add("/v1 JSON", 32, "Switchyard distributed", cell{p50: 3 * time.Millisecond, rps: 7000, cpu: 140})
	}
	tr := []trips{
		{mode: "embedded", scenario: "/v1 JSON", n: 100},
		{mode: "distributed", scenario: "/v1 JSON", n: 100, distributed: true, redisTrips: 1,
			redisTimes: redisTimes{total: 2500, scripts: map[string][]float64{"admit": {30, 31, 32}, "settle": {5, 6, 7}},
				admitAlone: limits.AdmitCost{Calls: 512, MicrosPerCall: 13, MeanMicrosPerCall: 14, CommandsPerCall: 8}}},
	}
	idle := []idleResult{
		{target: "plain Caddy", opened: 1000, wanted: 1000, before: 0, after: 58000,
			split: memSplit{goKnown: true, liveAfterGC: 20, stacksAfterGC: 16, heapLive: 30, freeKept: 4}},
		{target: "Switchyard embedded", opened: 1000, wanted: 1000, before: 0, after: 64000},
		{target: "Switchyard distributed", opened: 1000, wanted: 1000, before: 0, after: 70000,
			split: memSplit{goKnown: true, liveAfterGC: 26, stacksAfterGC: 18, heapLive: 33, freeKept: 6}},
	}
	md := report(options{rounds: 3, idle: 1000, counts: 100, concs: []int{1, 32}}, pinning{}, r, tr, &redisPing{p50: 47, p99: 80}, idle, nil, nil, time.Minute)

	for _, want := range []string{
		// embedded +40 µs ≤ 50 met; distributed +100 µs > 47 + 30 missed.
		"| /v1 JSON added p50, c=1 | ≤ 50 µs; distributed: ≤ one Redis round trip + 30 µs = 77 µs | +40 µs | met | +100 µs | **missed** |",
		"| /v1 JSON added p99, c=1 | not budgeted: plain Caddy's own p99 was 600 µs over the rounds | +300 µs | reported | +400 µs | reported |",
		"| /v1 JSON throughput, c=32 | ≥ 0.85× plain Caddy; distributed: ≥ 0.80× | 0.90× | met | 0.70× | **missed** |",
		"| /v1 JSON added CPU per request, c=32 | ≤ 15 µs; distributed: ≤ 30 µs | +11 µs | met | +50 µs | **missed** |",
		"| RSS per idle open /v3 stream (1000 streams) | ≤ plain Caddy's per /v1 stream + 8 KiB | 64.0 KiB (plain Caddy: 58.0) | met | 70.0 KiB (plain Caddy: 58.0) | **missed** |",
		// Judged on commandstats (13 µs), not the slow log's 31 µs.
		"| Redis time per admission (the admit script's time per call from `INFO commandstats`, slow log off; median of batches) | ≤ 15 µs | none (in-process limits) | met | 13 µs | met |",
		"| distributed | /v1 JSON | 0.00 | 0.00 | — | 0.00 | 0.00 | 1.00 | 25.0 µs | admit 0.03 × 31 µs, settle 0.03 × 6 µs, admit alone, no slow log: 13.0 µs (mean 14.0), 8.0 commands a call |",
		"| /v1 JSON | 32 | Switchyard embedded | 2000 µs | 0 µs | +0 µs | +0 µs | 9000 | 0.90× | 101 µs | +11 µs |",
		// Each missed line with its reason, from the other figures.
		"- /v1 JSON added p50, c=1, Switchyard distributed: it waits for one Redis round trip, which a bare `PING` takes 47 µs at p50 on this machine (in the line); at one client its process spent +60 µs of CPU per request more than plain Caddy's",
		"- /v1 JSON throughput, c=32, Switchyard distributed: at 32 clients each proxy is bound by the one CPU it is pinned to, so its throughput follows its CPU per request: plain Caddy's 90 µs over its 140 µs is 0.64×, where 0.70× was measured",
		"- RSS per idle open /v3 stream, Switchyard distributed: per stream, Go's live heap after a collection was 26.0 KiB and goroutine stacks 18.0 KiB, against plain Caddy's 20.0 and 16.0: +8.0 KiB the streams hold; the rest of the difference in RSS, +4.0 KiB,",
		// No profiles were given: nothing to split the added CPU by.
		"- /v1 JSON added CPU per request, c=32, Switchyard distributed: nothing else this run measured explains it",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks\n%s\nin\n%s", want, md)
		}
	}
	// A line met is not explained.
	if strings.Contains(md, "- /v1 JSON added p50, c=1, Switchyard embedded") {
		t.Errorf("the report explains a line that was met:\n%s", md)
	}
}

// TestRedisTimeMissedReason: a missed Redis time per admission is split
// into the script call's own cost and its commands'.
func TestRedisTimeMissedReason(t *testing.T) {
	tr := []trips{
		{mode: "distributed", scenario: "/v1 JSON", distributed: true, redisTimes: redisTimes{emptyScript: 5,
			admitAlone: limits.AdmitCost{Calls: 512, MicrosPerCall: 21, CommandsPerCall: 8}}},
		{mode: "distributed", scenario: "/v1 SSE", distributed: true, redisTimes: redisTimes{emptyScript: 7,
			admitAlone: limits.AdmitCost{Calls: 512, MicrosPerCall: 23, CommandsPerCall: 8}}},
	}
	got := missedReason(missedLine{lineRedisTime, "Switchyard distributed"}, newResults(), tr, nil, nil, nil)
	// Medians: 22 µs a call, 6 µs of it the empty script's, 8 commands.
	want := "an admission runs 8.0 commands in its one script; on this Redis a script that runs none costs 6.0 µs a call, so each command took about 2.0 µs"
	if !strings.HasPrefix(got, want) {
		t.Errorf("reason %q, want it to start %q", got, want)
	}
}
