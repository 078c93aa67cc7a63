package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// writeProfile writes a CPU profile whose samples are the given stacks
// (leaf first) with their nanoseconds.
func writeProfile(t *testing.T, stacks map[string]int64) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	funcs := map[string]*profile.Function{}
	for stack, ns := range stacks {
		var locs []*profile.Location
		for _, name := range strings.Split(stack, ";") {
			fn, ok := funcs[name]
			if !ok {
				fn = &profile.Function{ID: uint64(len(funcs) + 1), Name: name}
				funcs[name] = fn
				p.Function = append(p.Function, fn)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{ns / 10_000_000, ns}})
	}
	file := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestCPUSharesGoToTheNearestNamedFrame(t *testing.T) {
	file := writeProfile(t, map[string]int64{
		// SQLite and the store under the ledger writer are the writer's.
		"modernc.org/sqlite/lib.Xsqlite3BtreeInsert;github.com/switchyardhq/switchyard/storage/sqlstore.inTx;github.com/switchyardhq/switchyard/billing.(*LedgerWriter).flush;runtime.goexit": 30_000_000,
		// The proxy under Caddy's metrics handler is the proxy's.
		"syscall.Syscall;net/http.(*persistConn).roundTrip;github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP;github.com/caddyserver/caddy/v2/modules/caddyhttp.(*metricsInstrumentedHandler).ServeHTTP": 50_000_000,
		// A buffered writer is its caller's: go-redis's, net/http's.
		"syscall.write;bufio.(*Writer).Flush;github.com/redis/go-redis/v9/internal/pool.(*Conn).WithWriter": 40_000_000,
		"syscall.write;bufio.(*Writer).Flush;net/http.(*response).finishRequest":                            10_000_000,
		// Nothing named: the scheduler.
		"runtime.futex;runtime.schedule": 20_000_000,
	})
	shares, err := cpuShares(file)
	if err != nil {
		t.Fatal(err)
	}
	// net/http is nearer the leaf than reverse_proxy.
	want := map[string]float64{"ledger writer and request log": 0.2, "net/http (server and client)": 0.4, "go-redis": 0.266666666666666667, otherPart: 0.133333333333333333}
	if len(shares) != len(want) {
		t.Fatalf("shares %v, want %v", shares, want)
	}
	for name, w := range want {
		if math.Abs(shares[name]-w) > 1e-9 {
			t.Errorf("%s: %v, want %v (all: %v)", name, shares[name], w, shares)
		}
	}
}

func TestCPUBreakdownAddsOverPlainCaddy(t *testing.T) {
	r := newResults()
	for range 3 {
		r.add("/v1 JSON", 32, "plain Caddy", cell{cpu: 100})
		r.add("/v1 JSON", 32, "Switchyard embedded", cell{cpu: 200})
	}
	md := cpuBreakdown(r, map[string]map[string]float64{
		"plain Caddy":         {"Caddy's reverse_proxy": 0.6, otherPart: 0.4},
		"Switchyard embedded": {"Caddy's reverse_proxy": 0.4, "access log (Caddy's `log`, zap)": 0.25, otherPart: 0.35},
	})
	for _, line := range []string{
		"| access log (Caddy's `log`, zap) | 0.0 µs | 50.0 µs | +50.0 µs |",
		"| Caddy's reverse_proxy | 60.0 µs | 80.0 µs | +20.0 µs |",
		"| other (scheduler, poller, runtime) | 40.0 µs | 70.0 µs | +30.0 µs |",
		"| **all** | 100.0 µs | 200.0 µs | +100.0 µs |",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("no line %q in\n%s", line, md)
		}
	}
	why := topAddedParts(r, map[string]map[string]float64{
		"plain Caddy":         {"Caddy's reverse_proxy": 0.6, otherPart: 0.4},
		"Switchyard embedded": {"Caddy's reverse_proxy": 0.4, "access log (Caddy's `log`, zap)": 0.25, otherPart: 0.35},
	})
	if want := "access log (Caddy's `log`, zap) +50.0 µs, other (scheduler, poller, runtime) +30.0 µs, Caddy's reverse_proxy +20.0 µs"; why["Switchyard embedded"] != want {
		t.Errorf("reasons %q, want them to hold %q", why, want)
	}
}
