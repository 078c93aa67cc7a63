package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// cpuPart is a part of a proxy's work, told apart in a CPU profile by the
// functions on a sample's stack. A sample belongs to the part of the
// frame nearest its leaf that any part names, so work a component calls
// is its own (SQLite under the ledger writer is the ledger writer's; the
// proxy under Caddy's metrics handler is the proxy's), and a frame the
// parts do not name (the runtime, a driver, syscalls) goes to its
// caller's part.
type cpuPart struct {
	name  string
	funcs []string // substrings of function names, the first part to name a frame wins
}

// cpuParts are the parts of the report's breakdown, gateway-only work
// first. The order matters only for a frame two of them name.
var cpuParts = []cpuPart{
	{"access log (Caddy's `log`, zap)", []string{"caddyhttp.(*Server).logRequest", "go.uber.org/zap", "caddy/v2/modules/logging", "caddy/v2/internal.Loggable", "caddyhttp.(*ExtraLogFields)", "caddy/v2.(*CustomLog)"}},
	{"ledger writer and request log", []string{"switchyard/billing.(*LedgerWriter)"}},
	{"metrics (Caddy's and Switchyard's)", []string{"prometheus/client_golang", "caddyhttp.(*metricsInstrumented", "caddyhttp.newMetricsInstrumented", "caddyhttp.computeApproximateRequestSize", "switchyard/telemetry"}},
	{"admission (limits, holds)", []string{"switchyard/policy/limits"}},
	{"authentication and policy", []string{"switchyard/policy"}},
	{"metering (usage read, charge)", []string{"switchyard/billing"}},
	{"go-redis", []string{"github.com/redis/go-redis"}},
	{"Switchyard's handlers", []string{"github.com/switchyardhq/switchyard/"}},
	{"Caddy's reverse_proxy", []string{"caddyhttp/reverseproxy"}},
	{"net/http (server and client)", []string{"net/http", "net/textproto"}},
	{"Caddy's server and routes", []string{"github.com/caddyserver/caddy/v2"}},
	{"garbage collection", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcAssistAlloc"}},
}

// passedOn are frames that count as their caller's: the stores and the
// goroutine guard serve whichever part called them, and so does a
// buffered reader or writer (net/http's connections, go-redis's and
// pgx's alike: named for itself, go-redis's writes went to net/http).
var passedOn = []string{"switchyard/storage/", "switchyard/internal/guard.", "bufio."}

// otherPart is where a sample that no part names goes: the scheduler,
// the network poller, syscalls outside a handler.
const otherPart = "other (scheduler, poller, runtime)"

// cpuShares reads a CPU profile and returns each part's share of its
// samples' CPU time (0 to 1), otherPart included.
func cpuShares(file string) (map[string]float64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("%s: not a CPU profile", file)
	}
	byPart := make(map[string]int64)
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		byPart[partOf(s)] += v
	}
	if total == 0 {
		return nil, fmt.Errorf("%s: no samples", file)
	}
	shares := make(map[string]float64, len(byPart))
	for name, v := range byPart {
		shares[name] = float64(v) / float64(total)
	}
	return shares, nil
}

// partOf is the part of the frame nearest s's leaf that a part names.
// Location[0] is the leaf, and a location's Line[0] its innermost
// inlined call.
func partOf(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil || namesAny(line.Function.Name, passedOn) {
				continue
			}
			if name := partNaming(line.Function.Name); name != "" {
				return name
			}
		}
	}
	return otherPart
}

func partNaming(fn string) string {
	for _, part := range cpuParts {
		if namesAny(fn, part.funcs) {
			return part.name
		}
	}
	return ""
}

func namesAny(fn string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(fn, sub) {
			return true
		}
	}
	return false
}

// cpuBreakdown is the report's section on where each proxy's CPU per
// request goes at /v1 JSON, concurrency 32: the median CPU per request
// of the rounds, split by the shares of its CPU profile, and what a
// gateway adds over plain Caddy in each part. It is the reason beside
// the added-CPU budget line: the parts plain Caddy does not have are the
// gateway's own work, the others what it makes Caddy's work cost more.
func cpuBreakdown(r *results, shares map[string]map[string]float64) string {
	perReq, cols := cpuPerRequest(r, shares)
	if len(cols) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Where the CPU per request goes (/v1 JSON, c=32)\n\n")
	p("Each proxy's median CPU per request over the rounds, split by the shares of its CPU profile taken at the end of the run " +
		"(a sample goes to the part of the frame nearest its leaf that a part names: SQLite under the ledger writer is the writer's, " +
		"the proxy under Caddy's metrics handler the proxy's). \"Added\" is the gateway's less plain Caddy's.\n\n| part |")
	for _, t := range cols {
		if t == "plain Caddy" {
			p(" %s |", t)
		} else {
			p(" %s | added |", t)
		}
	}
	p("\n|---|")
	for _, t := range cols {
		if t == "plain Caddy" {
			p("---|")
		} else {
			p("---|---|")
		}
	}
	p("\n")
	names := partNames()
	row := func(name string, of func(t string) float64) {
		p("| %s |", name)
		for _, t := range cols {
			v := of(t)
			if t == "plain Caddy" {
				p(" %.1f µs |", v)
				continue
			}
			p(" %.1f µs |", v)
			if _, ok := perReq["plain Caddy"]; ok {
				p(" %s |", fmtSignedTenths(v-of("plain Caddy")))
			} else {
				p(" — |")
			}
		}
		p("\n")
	}
	for _, name := range names {
		seen := false
		for _, t := range cols {
			if shares[t][name] > 0 {
				seen = true
			}
		}
		if !seen {
			continue
		}
		row(name, func(t string) float64 { return perReq[t] * shares[t][name] })
	}
	row("**all**", func(t string) float64 { return perReq[t] })
	p("\n")
	return b.String()
}

func fmtSignedTenths(v float64) string {
	if v >= 0 {
		return fmt.Sprintf("+%.1f µs", v)
	}
	return fmt.Sprintf("−%.1f µs", -v)
}

// topAddedParts lists, for each gateway with a profile, the four parts
// of its CPU per request at /v1 JSON, concurrency 32, that added most
// over plain Caddy's, as "part +1.2 µs, ...".
func topAddedParts(r *results, shares map[string]map[string]float64) map[string]string {
	perReq, cols := cpuPerRequest(r, shares)
	out := make(map[string]string)
	if _, ok := perReq["plain Caddy"]; !ok {
		return out
	}
	type added struct {
		part string
		us   float64
	}
	for _, t := range cols {
		if t == "plain Caddy" {
			continue
		}
		var parts []added
		for _, name := range partNames() {
			parts = append(parts, added{name, perReq[t]*shares[t][name] - perReq["plain Caddy"]*shares["plain Caddy"][name]})
		}
		slices.SortFunc(parts, func(a, b added) int { return cmp.Compare(b.us, a.us) })
		var top []string
		for _, a := range parts[:min(4, len(parts))] {
			if a.us < 0.05 {
				break
			}
			top = append(top, fmt.Sprintf("%s %s", a.part, fmtSignedTenths(a.us)))
		}
		out[t] = strings.Join(top, ", ")
	}
	return out
}

// cpuPerRequest is the median CPU per request at /v1 JSON, concurrency
// 32, of plain Caddy and each gateway that has a profile, and their
// order for the report.
func cpuPerRequest(r *results, shares map[string]map[string]float64) (map[string]float64, []string) {
	perReq := make(map[string]float64)
	var cols []string
	for _, t := range append([]string{"plain Caddy"}, gatewayTargets(r)...) {
		if shares[t] == nil {
			continue
		}
		cpu := finite(r.own("/v1 JSON", 32, t, func(x cell) float64 { return x.cpu }))
		if len(cpu) == 0 {
			continue
		}
		cols = append(cols, t)
		perReq[t] = median(cpu)
	}
	return perReq, cols
}

func partNames() []string {
	names := make([]string, 0, len(cpuParts)+1)
	for _, part := range cpuParts {
		names = append(names, part.name)
	}
	return append(names, otherPart)
}
