package main

import (
	"fmt"
	"math"
	"strings"
)

// The budget lines' names, as the budget table and whyMissed print them.
const (
	lineP50        = "/v1 JSON added p50, c=1"
	lineThroughput = "/v1 JSON throughput, c=32"
	lineCPU        = "/v1 JSON added CPU per request, c=32"
	lineFirstByte  = "/v3 SSE first byte p50 over plain Caddy's, c=1"
	lineChunk      = "/v3 SSE cost per relayed chunk, c=1"
	lineIdleRSS    = "RSS per idle open /v3 stream"
	lineRedisTrips = "Redis round trips per request"
	lineRedisTime  = "Redis time per admission"
)

// missedLine is a budget line a gateway missed.
type missedLine struct{ line, target string }

// whyMissed explains each missed budget line with what this run measured
// besides the line itself: where the added CPU went, what the throughput
// follows, what an admission's commands cost on this Redis, what the
// idle streams' memory is made of. A line it has no measurement to
// explain with says so.
func whyMissed(missed []missedLine, r *results, tr []trips, ping *redisPing, idle []idleResult, shares map[string]map[string]float64) string {
	if len(missed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Why each missed line is missed, from this run's other measurements:\n\n")
	for _, m := range missed {
		fmt.Fprintf(&b, "- %s, %s: %s\n", m.line, m.target, missedReason(m, r, tr, ping, idle, shares))
	}
	b.WriteString("\n")
	return b.String()
}

func missedReason(m missedLine, r *results, tr []trips, ping *redisPing, idle []idleResult, shares map[string]map[string]float64) string {
	distributed := strings.HasSuffix(m.target, "distributed")
	switch m.line {
	case lineCPU:
		if top := topAddedParts(r, shares)[m.target]; top != "" {
			return "the parts of its CPU profile that added most over plain Caddy's: " + top +
				" (every part in \"Where the CPU per request goes\")."
		}
	case lineThroughput:
		plain := median(finite(r.own("/v1 JSON", 32, "plain Caddy", func(x cell) float64 { return x.cpu })))
		own := median(finite(r.own("/v1 JSON", 32, m.target, func(x cell) float64 { return x.cpu })))
		measured := median(r.perRound("/v1 JSON", 32, m.target, func(x, pl cell) float64 { return x.rps / pl.rps }))
		if plain > 0 && own > 0 {
			why := fmt.Sprintf("at 32 clients each proxy is bound by the one CPU it is pinned to, so its throughput follows its CPU "+
				"per request: plain Caddy's %.0f µs over its %.0f µs is %s, where %s was measured; the added CPU is "+
				"explained under its own line.", plain, own, fmtRatio(plain/own), fmtRatio(measured))
			if measured < 0.95*plain/own {
				why += " The rest of the gap is time the proxy waited with its CPU idle: for what runs on the other CPU " +
					"(the load generator and the backend"
				if distributed {
					why += ", and Redis, which every request waits for"
				}
				why += ")."
			}
			return why
		}
	case lineP50:
		added := median(finite(r.perRound("/v1 JSON", 1, m.target, func(x, pl cell) float64 { return x.cpu - pl.cpu })))
		var parts []string
		if distributed && ping != nil {
			parts = append(parts, fmt.Sprintf("it waits for one Redis round trip, which a bare `PING` takes %.0f µs at p50 on "+
				"this machine (in the line)", ping.p50))
		}
		if !math.IsNaN(added) {
			parts = append(parts, fmt.Sprintf("at one client its process spent %s of CPU per request more than plain Caddy's "+
				"(median of the rounds), on the request's path or beside it (the ledger writer's commits)", fmtSignedUs(added)))
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ") + "."
		}
	case lineRedisTime:
		// The line is judged on every scenario's probe; so is the reason.
		var perCall, commands, empty []float64
		for _, x := range tr {
			if a := x.redisTimes.admitAlone; x.distributed && a.Calls > 0 && strings.HasSuffix(m.target, x.mode) {
				perCall, commands = append(perCall, a.MicrosPerCall), append(commands, a.CommandsPerCall)
				empty = append(empty, x.redisTimes.emptyScript)
			}
		}
		if len(perCall) == 0 {
			break
		}
		n, e, took := median(commands), median(finite(empty)), median(perCall)
		if math.IsNaN(e) || n == 0 {
			return fmt.Sprintf("an admission runs %.1f commands in its one script.", n)
		}
		return fmt.Sprintf("an admission runs %.1f commands in its one script; on this Redis a script that runs none "+
			"costs %.1f µs a call, so each command took about %.1f µs (medians over the scenarios' probes): below 15 µs "+
			"needs fewer commands an admission, or a faster Redis thread than this machine's.", n, e, (took-e)/n)
	case lineIdleRSS:
		var plain, own *idleResult
		for i := range idle {
			switch idle[i].target {
			case "plain Caddy":
				plain = &idle[i]
			case m.target:
				own = &idle[i]
			}
		}
		if plain != nil && own != nil && plain.split.goKnown && own.split.goKnown {
			p, o := plain.split, own.split
			return fmt.Sprintf("per stream, Go's live heap after a collection was %.1f KiB and goroutine stacks %.1f KiB, "+
				"against plain Caddy's %.1f and %.1f: %+.1f KiB the streams hold; the rest of the difference in RSS, %+.1f KiB, "+
				"is memory Go had not collected or handed back when the RSS was read (heap live before the collection %.1f "+
				"against %.1f, free pages kept %.1f against %.1f).",
				o.liveAfterGC, o.stacksAfterGC, p.liveAfterGC, p.stacksAfterGC,
				(o.liveAfterGC+o.stacksAfterGC)-(p.liveAfterGC+p.stacksAfterGC),
				(own.perStream()-plain.perStream())-((o.liveAfterGC+o.stacksAfterGC)-(p.liveAfterGC+p.stacksAfterGC)),
				o.heapLive, p.heapLive, o.freeKept, p.freeKept)
		}
	}
	return "nothing else this run measured explains it; see the tables below."
}
