package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

type cellKey struct {
	scenario string
	conc     int
	target   string
}

// results holds every round's cell of every target.
type results struct {
	cells   map[cellKey][]cell
	targets []string
}

func newResults() *results { return &results{cells: make(map[cellKey][]cell)} }

func (r *results) add(s string, c int, t string, x cell) {
	k := cellKey{s, c, t}
	r.cells[k] = append(r.cells[k], x)
	if !slices.Contains(r.targets, t) {
		r.targets = append(r.targets, t)
	}
}

// perRound is f of target t's cell and plain Caddy's of the same round,
// for every round.
func (r *results) perRound(s string, c int, t string, f func(x, plain cell) float64) []float64 {
	xs, ps := r.cells[cellKey{s, c, t}], r.cells[cellKey{s, c, "plain Caddy"}]
	var out []float64
	for i := range min(len(xs), len(ps)) {
		out = append(out, f(xs[i], ps[i]))
	}
	return out
}

func (r *results) own(s string, c int, t string, f func(x cell) float64) []float64 {
	var out []float64
	for _, x := range r.cells[cellKey{s, c, t}] {
		out = append(out, f(x))
	}
	return out
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// span formats the smallest and largest of vs with unit: "257–262 µs",
// or one value when they agree.
func span(vs []float64, format func(float64) string) string {
	if len(vs) == 0 {
		return "—"
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + " – " + format(hi)
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtUs(v float64) string {
	if math.Abs(v) >= 10_000 {
		return fmt.Sprintf("%.1f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

func fmtSignedUs(v float64) string {
	if v >= 0 {
		return "+" + fmtUs(v)
	}
	return "−" + fmtUs(-v)
}

func fmtRatio(v float64) string { return fmt.Sprintf("%.2f×", v) }
func fmtRPS(v float64) string   { return fmt.Sprintf("%.0f", v) }
func fmtF(v float64) string     { return fmt.Sprintf("%.2f", v) }

// verdict compares the median over rounds with a budget.
func verdict(vs []float64, ok func(float64) bool) string {
	if len(vs) == 0 {
		return "not measured"
	}
	if ok(median(vs)) {
		return "met"
	}
	return verdictMissed
}

const verdictMissed = "**missed**"

func report(o options, pin pinning, r *results, tr []trips, ping *redisPing, idle []idleResult, shares map[string]map[string]float64, profiles []string, took time.Duration) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Switchyard benchmark\n\n")
	p("`go run ./bench%s` (`make bench`), %s, took %s.\n\n", map[bool]string{true: " -quick", false: ""}[o.quick],
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second))
	p("- Machine: %s, %d CPUs, %s; commit %s.\n", cpuModel(), runtime.NumCPU(), runtime.Version(), commit())
	p("- %d interleaved rounds: in each round every scenario and concurrency runs against every target in turn "+
		"(the order reversed every other round), %s measured after %s of warm-up per target. "+
		"**Every figure is the min – max over the rounds**; budget verdicts use the median round. "+
		"\"Added\" and \"× plain Caddy\" compare with plain Caddy in the same round.\n", o.rounds, o.dur, o.warm)
	p("- Pinning: %s.\n", pin.describe())
	p("- Demo backend without delays (`switchyard demo-backend`); plain Caddy is the same binary with a bare `reverse_proxy`. " +
		"Switchyard runs `Caddyfile.example` with rate and stream limits raised out of the way: every request is " +
		"authenticated, admitted (rate, stream slot, balance hold) and charged. " +
		"The /v3 rows' direct and plain-Caddy baselines are the /v1 request the gateway itself sends the backend, recorded before the run, system prompt and tool schemas included: a stream with usage, for /v3 JSON too.\n\n")

	modes := gatewayTargets(r)
	// missed are the budget lines a gateway missed, in the table's order,
	// each explained below it (whyMissed).
	var missed []missedLine
	judge := func(line, t string, vs []float64, ok func(float64) bool) string {
		v := verdict(vs, ok)
		if v == verdictMissed {
			missed = append(missed, missedLine{line, t})
		}
		return v
	}
	// The budget.
	p("## Budget\n\n| budget | limit |")
	for _, m := range modes {
		p(" %s | |", m)
	}
	p("\n|---|---|")
	for range modes {
		p("---|---|")
	}
	p("\n")
	// modeRow is a row whose line depends on the mode: ok is nil for a
	// mode it does not budget.
	modeRow := func(name, limit string, vals func(t string) []float64, format func(float64) string, ok func(t string) func(float64) bool) {
		p("| %s | %s |", name, limit)
		for _, t := range modes {
			vs := vals(t)
			if f := ok(t); f != nil {
				p(" %s | %s |", span(vs, format), judge(name, t, vs, f))
			} else {
				p(" %s | not measured |", span(vs, format))
			}
		}
		p("\n")
	}
	row := func(name, limit string, vals func(t string) []float64, format func(float64) string, ok func(float64) bool) {
		modeRow(name, limit, vals, format, func(string) func(float64) bool { return ok })
	}
	// byMode picks a mode's line.
	byMode := func(embedded, distributed float64, atMost bool) func(t string) func(float64) bool {
		return func(t string) func(float64) bool {
			line := embedded
			if strings.HasSuffix(t, "distributed") {
				line = distributed
			}
			if math.IsNaN(line) {
				return nil
			}
			if atMost {
				return func(v float64) bool { return v <= line }
			}
			return func(v float64) bool { return v >= line }
		}
	}
	const j1, s3 = "/v1 JSON", "/v3 SSE"
	// The distributed mode waits for one Redis round trip before any work
	// of its own: its line is that round trip, as a bare PING from the
	// proxies' CPU takes it at p50, and 30 µs.
	roundTrip, roundTripLine := math.NaN(), "≤ 50 µs; distributed: ≤ one Redis round trip + 30 µs (round trip not measured)"
	if ping != nil {
		roundTrip = ping.p50
		roundTripLine = fmt.Sprintf("≤ 50 µs; distributed: ≤ one Redis round trip + 30 µs = %.0f µs", roundTrip+30)
	}
	modeRow(lineP50, roundTripLine, func(t string) []float64 {
		return r.perRound(j1, 1, t, func(x, pl cell) float64 { return us(x.p50 - pl.p50) })
	}, fmtSignedUs, byMode(50, roundTrip+30, true))
	// The p99 at concurrency 1 is not budgeted: a single stall of the
	// machine moves it, as plain Caddy's own spread over the rounds shows.
	plainP99 := r.own(j1, 1, "plain Caddy", func(x cell) float64 { return us(x.p99) })
	p("| /v1 JSON added p99, c=1 | not budgeted: plain Caddy's own p99 was %s over the rounds |", span(plainP99, fmtUs))
	for _, t := range modes {
		p(" %s | reported |", span(r.perRound(j1, 1, t, func(x, pl cell) float64 { return us(x.p99 - pl.p99) }), fmtSignedUs))
	}
	p("\n")
	modeRow(lineThroughput, "≥ 0.85× plain Caddy; distributed: ≥ 0.80×", func(t string) []float64 {
		return r.perRound(j1, 32, t, func(x, pl cell) float64 { return x.rps / pl.rps })
	}, fmtRatio, byMode(0.85, 0.80, false))
	modeRow(lineCPU, "≤ 15 µs; distributed: ≤ 30 µs", func(t string) []float64 {
		return finite(r.perRound(j1, 32, t, func(x, pl cell) float64 { return x.cpu - pl.cpu }))
	}, fmtSignedUs, byMode(15, 30, true))
	row(lineFirstByte, "≤ +1 ms", func(t string) []float64 {
		return r.perRound(s3, 1, t, func(x, pl cell) float64 { return us(x.ttfb50 - pl.ttfb50) })
	}, fmtSignedUs, func(v float64) bool { return v <= 1000 })
	row(lineChunk, "≤ 10 µs", func(t string) []float64 {
		return r.perRound(s3, 1, t, perChunk)
	}, fmtUs, func(v float64) bool { return v <= 10 })
	p("| %s (%d streams) | ≤ plain Caddy's per /v1 stream + 8 KiB |", lineIdleRSS, o.idle)
	var plainIdle float64
	for _, x := range idle {
		if x.target == "plain Caddy" {
			plainIdle = x.perStream()
		}
	}
	for _, t := range modes {
		found := false
		for _, x := range idle {
			if x.target == t {
				v := x.perStream()
				p(" %.1f KiB (plain Caddy: %.1f) | %s |", v, plainIdle, judge(lineIdleRSS, t, []float64{v}, func(v float64) bool { return v <= plainIdle+8 }))
				found = true
			}
		}
		if !found {
			p(" — | not measured |")
		}
	}
	p("\n")
	p("| %s | ≤ 1 |", lineRedisTrips)
	for _, t := range modes {
		vs := tripValues(tr, t, func(x trips) (float64, bool) { return x.redisTrips, x.distributed })
		if len(vs) == 0 {
			p(" none (in-process limits) | met |")
			continue
		}
		p(" %s | %s |", span(vs, fmtF), judge(lineRedisTrips, t, []float64{slices.Max(vs)}, func(v float64) bool { return v <= 1.05 }))
	}
	p("\n")
	// The line is judged on INFO commandstats with the slow log off
	// (redisTimes.admitAlone): the slow log's medians, told to log every
	// command, include that logging.
	p("| %s (the admit script's time per call from `INFO commandstats`, slow log off; median of batches) | ≤ 15 µs |", lineRedisTime)
	for _, t := range modes {
		vs := finite(tripValues(tr, t, func(x trips) (float64, bool) {
			if a := x.redisTimes.admitAlone; a.Calls > 0 {
				return a.MicrosPerCall, x.distributed
			}
			return math.NaN(), x.distributed
		}))
		if len(vs) == 0 {
			p(" none (in-process limits) | met |")
			continue
		}
		p(" %s | %s |", span(vs, fmtUs), judge(lineRedisTime, t, vs, func(v float64) bool { return v <= 15 }))
	}
	p("\n")
	p("| SQL write transactions per request | none on the client's path |")
	for _, t := range modes {
		vs := tripValues(tr, t, func(x trips) (float64, bool) {
			if x.distributed {
				return x.pgRowsWritten, true
			}
			return x.sqlTxs, true
		})
		unit := "write tx"
		if strings.HasSuffix(t, "distributed") {
			unit = "rows written"
		}
		p(" %s %s | counted, see below |", span(vs, fmtF), unit)
	}
	p("\n\n")
	if ping != nil {
		p("The distributed mode's floor: a bare Redis `PING` from the proxies' CPU to the bench's Redis, over one connection "+
			"(`redis-benchmark -c 1`, pinned like the proxies), takes %.0f µs at p50 and %.0f µs at p99. Every request waits "+
			"for one round trip to Redis, before any work of the gateway's.\n\n", ping.p50, ping.p99)
	}
	p("%s", whyMissed(missed, r, tr, ping, idle, shares))

	// Every cell.
	p("## Latency and throughput\n\n")
	p("| scenario | c | target | p50 | p99 | added p50 | added p99 | req/s | × plain Caddy | CPU per request | added CPU | first byte p50 | first byte p99 | per chunk | chunks | errors |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range scenarios {
		for _, c := range o.concs {
			for _, t := range r.targets {
				xs := r.cells[cellKey{s.name, c, t}]
				if len(xs) == 0 {
					continue
				}
				own := func(f func(x cell) float64) []float64 { return r.own(s.name, c, t, f) }
				rel := func(f func(x, pl cell) float64) []float64 {
					if t == "plain Caddy" || t == "direct" {
						return nil
					}
					return r.perRound(s.name, c, t, f)
				}
				label := t
				if s.basePath != "" && (t == "direct" || t == "plain Caddy") {
					label += " (/v1 equivalent)"
				}
				chunkCost := "—"
				if s.stream {
					chunkCost = span(rel(perChunk), fmtUs)
				}
				errs := 0
				for _, x := range xs {
					errs += x.errors
				}
				p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", s.name, c, label,
					span(own(func(x cell) float64 { return us(x.p50) }), fmtUs),
					span(own(func(x cell) float64 { return us(x.p99) }), fmtUs),
					span(rel(func(x, pl cell) float64 { return us(x.p50 - pl.p50) }), fmtSignedUs),
					span(rel(func(x, pl cell) float64 { return us(x.p99 - pl.p99) }), fmtSignedUs),
					span(own(func(x cell) float64 { return x.rps }), fmtRPS),
					span(rel(func(x, pl cell) float64 { return x.rps / pl.rps }), fmtRatio),
					span(finite(own(func(x cell) float64 { return x.cpu })), fmtUs),
					span(finite(rel(func(x, pl cell) float64 { return x.cpu - pl.cpu })), fmtSignedUs),
					span(own(func(x cell) float64 { return us(x.ttfb50) }), fmtUs),
					span(own(func(x cell) float64 { return us(x.ttfb99) }), fmtUs),
					chunkCost,
					span(own(func(x cell) float64 { return x.chunks }), func(v float64) string { return fmt.Sprintf("%.0f", v) }),
					errs)
			}
		}
	}
	p("\n\"Per chunk\" is what the target adds after the first byte, over plain Caddy, divided by the data events of the response: " +
		"((p50 − first byte p50) − plain Caddy's) / chunks. \"CPU per request\" is the user and system time of the target's process " +
		"(`/proc/<pid>/stat`, in clock ticks of 10 ms) over the measured period, divided by the requests it served; for direct, the " +
		"demo backend's; \"added CPU\" is the target's less plain Caddy's in the same round.\n\n")

	p("## Round trips per request\n\n")
	p("Counted over %d requests per row sent one at a time, not estimated: SQL reads and write transactions from the gateway's "+
		"`switchyard_sqlite_statements_total` or `switchyard_postgres_statements_total`; PostgreSQL transactions (each statement "+
		"outside a transaction is one, and so is each delivery of notifications to a listener; less the pings of the gateway's "+
		"commit feed, two each) and rows "+
		"written from `pg_stat_database` of the bench's own database, read after PostgreSQL published them; Redis round trips "+
		"from the gateway's `switchyard_redis_round_trips_total` (a hook on the client: one per command or pipeline sent), and the "+
		"commands Redis ran, those inside scripts included, from `INFO commandstats` of the bench's own Redis; Redis's time, "+
		"from its slow log told to log every command: \"Redis time per request\" adds up every command the gateway sent (a script "+
		"with the commands it ran), and the scripts are told apart by their SHA1 (admit: the admission; settle: a hold settled, "+
		"sent with the releases; renew: leases and holds renewed).\n\n", o.counts)
	p("| mode | scenario | SQL reads | SQL write tx | statements in write tx | PostgreSQL tx | rows written | Redis round trips | Redis time per request | Redis scripts: calls per request × median per call | commands Redis ran |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range tr {
		if x.distributed {
			p("| %s | %s | %.2f | %.2f | — | %.2f | %.2f | %.2f | %.1f µs | %s | %.2f: %s |\n", x.mode, x.scenario, x.sqlReads, x.sqlTxs, x.pgXacts, x.pgRowsWritten, x.redisTrips,
				x.redisTimes.total/float64(x.n), x.redisTimes.describe(x.n), x.redisCommands, x.redisBy)
		} else {
			p("| %s | %s | %.2f | %.2f | %.2f | — | — | none | — | — | — |\n", x.mode, x.scenario, x.sqlReads, x.sqlTxs, x.sqlTxStatements)
		}
	}
	p("\nWhether a write is on the client's path is not visible in a count; docs/performance.md says which are.\n\n")

	if len(idle) > 0 {
		p("## Idle open streams\n\n| target | scenario | streams | RSS before | RSS after | per stream |\n|---|---|---|---|---|---|\n")
		for _, x := range idle {
			p("| %s | %s | %d of %d | %d KiB | %d KiB | %.1f KiB |\n", x.target, x.scenario, x.opened, x.wanted, x.before, x.after, x.perStream())
		}
		p("\nThe backend holds every stream before its first token; memory is the process's VmRSS.\n\n")
	}
	if len(shares) > 0 {
		p("%s", cpuBreakdown(r, shares))
	}
	if len(profiles) > 0 {
		p("## Profiles\n\nCaddy's admin `/debug/pprof`, saved in %s: ", o.out)
		for i, f := range profiles {
			if i > 0 {
				p(", ")
			}
			p("`%s`", f)
		}
		p(". Read one with `go tool pprof -top bin/switchyard %s/%s`.\n", o.out, profiles[0])
	}
	return b.String()
}

// perChunk is what x adds per data event after the first byte, over plain
// Caddy in the same round.
func perChunk(x, pl cell) float64 {
	if x.chunks == 0 {
		return math.NaN()
	}
	added := us(x.p50-x.ttfb50) - us(pl.p50-pl.ttfb50)
	return max(added, 0) / x.chunks
}

// finite drops the NaNs of cells whose CPU time was not read.
func finite(vs []float64) []float64 {
	return slices.DeleteFunc(vs, func(v float64) bool { return math.IsNaN(v) })
}

func gatewayTargets(r *results) []string {
	var out []string
	for _, t := range r.targets {
		if strings.HasPrefix(t, "Switchyard ") {
			out = append(out, t)
		}
	}
	return out
}

func tripValues(tr []trips, target string, f func(trips) (float64, bool)) []float64 {
	var out []float64
	for _, x := range tr {
		if "Switchyard "+x.mode != target {
			continue
		}
		if v, ok := f(x); ok {
			out = append(out, v)
		}
	}
	return out
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); len(st) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}
