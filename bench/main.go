// Command bench measures what the gateway adds to a request. In one run
// it sends the same load, interleaved round by round so that drift
// cancels, to
//
//   - the demo backend directly (direct),
//   - the same binary as a plain Caddy reverse_proxy (plain Caddy),
//   - Switchyard on its embedded defaults: SQLite, in-process limits
//     (embedded),
//   - Switchyard on PostgreSQL and a Redis of its own (distributed),
//
// every Switchyard request authenticated, admitted and charged, with the
// rate and stream limits raised out of the way. It measures /v1 and /v3,
// JSON and streams, at concurrency 1 and 32; the resident memory of 1,000
// idle open streams; and counts the Redis commands and SQL statements
// each request costs. It prints a Markdown table, writes it to
// bench/results/latest.md and saves CPU and allocation profiles of the
// gateway under load next to it. docs/performance.md says how to read it.
//
//	go run ./bench [-quick] [-rounds 3] [-dur 2s] [-modes embedded,distributed]
//
// BENCH_QUICK=1 is -quick: short cells, two rounds, for development.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

type options struct {
	bin        string
	quick      bool
	rounds     int
	dur        time.Duration
	warm       time.Duration
	concs      []int
	modes      []string // embedded, distributed
	postgres   string
	out        string
	idle       int
	profile    time.Duration
	nopin      bool
	counts     int
	contention bool
	trace      bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/switchyard", "switchyard binary")
	flag.BoolVar(&o.quick, "quick", os.Getenv("BENCH_QUICK") == "1", "short run for development (also BENCH_QUICK=1)")
	flag.IntVar(&o.rounds, "rounds", 0, "interleaved rounds (default 3, quick 2)")
	flag.DurationVar(&o.dur, "dur", 0, "measured time per target and cell (default 2s, quick 400ms)")
	modes := flag.String("modes", "embedded,distributed", "Switchyard modes to run")
	flag.StringVar(&o.postgres, "postgres", envOr("SWITCHYARD_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"),
		"PostgreSQL server on which to create the distributed mode's database")
	flag.StringVar(&o.out, "out", "bench/results", "directory for latest.md and the profiles")
	flag.IntVar(&o.idle, "idle", 1000, "idle open streams for the memory measurement (0: skip)")
	flag.BoolVar(&o.nopin, "nopin", false, "do not pin processes to CPUs")
	flag.BoolVar(&o.trace, "trace", false, "also save an execution trace of each gateway at concurrency 1 (go tool trace)")
	flag.BoolVar(&o.contention, "contention", false, "also save mutex and block profiles (sampling them slows the gateways a little)")
	flag.Parse()
	o.modes = strings.Split(*modes, ",")
	o.concs = []int{1, 32}
	if o.rounds == 0 {
		o.rounds = pick(o.quick, 2, 3)
	}
	if o.dur == 0 {
		o.dur = pick(o.quick, 400*time.Millisecond, 2*time.Second)
	}
	o.warm = max(o.dur/5, 100*time.Millisecond)
	o.profile = pick(o.quick, 2*time.Second, 6*time.Second)
	o.counts = pick(o.quick, 50, 200)
	if err := bench(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func pick[T any](quick bool, q, full T) T {
	if quick {
		return q
	}
	return full
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// env is the environment of one Switchyard mode.
type mode struct {
	name  string
	env   []string
	redis string // private Redis address, distributed only
	pgURL string
}

func bench(o options) error {
	pin := choosePinning(o.nopin)
	if err := pin.pinSelf(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "switchyard-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var cleanups []func()
	defer func() {
		for _, f := range slices.Backward(cleanups) {
			f()
		}
	}()

	upAddr := freeAddr()
	up, err := startProc("demo backend", pin.command(pin.aux, o.bin, "demo-backend", "--listen", upAddr), os.Environ())
	if err != nil {
		return err
	}
	cleanups = append(cleanups, up.stop)
	if err := waitFor(upAddr, up); err != nil {
		return err
	}

	// Switchyard's modes.
	var modes []*mode
	for _, name := range o.modes {
		m := &mode{name: name}
		base := gatewayEnv(upAddr)
		switch name {
		case "embedded":
			m.env = append(base, "SWITCHYARD_DATA_DIR="+filepath.Join(tmp, "embedded"))
		case "distributed":
			rp, addr, err := privateRedis(pin, tmp)
			if err != nil {
				return err
			}
			cleanups = append(cleanups, rp.stop)
			url, drop, err := pgDatabase(o.postgres)
			if err != nil {
				return err
			}
			cleanups = append(cleanups, drop)
			m.redis, m.pgURL = addr, url
			m.env = append(base,
				"SWITCHYARD_DATA_DIR="+filepath.Join(tmp, "distributed"),
				"SWITCHYARD_POSTGRES_URL="+url,
				"SWITCHYARD_REDIS_URL=redis://"+addr+"/0",
			)
		default:
			return fmt.Errorf("unknown mode %q (embedded, distributed)", name)
		}
		modes = append(modes, m)
	}

	gwConfig, err := raisedCaddyfile(tmp)
	if err != nil {
		return err
	}
	if err := captureBaselines(o, pin, gwConfig, upAddr, tmp); err != nil {
		return err
	}
	plainAddr, plainAdmin := freeAddr(), freeAddr()
	plainCfg := filepath.Join(tmp, "Caddyfile.plain")
	if err := os.WriteFile(plainCfg, []byte(plainCaddyfile(plainAdmin, plainAddr, upAddr)), 0o600); err != nil {
		return err
	}
	plain, err := startProc("plain Caddy", pin.command(pin.proxy, o.bin, "run", "--config", plainCfg, "--adapter", "caddyfile"),
		append(os.Environ(), "HOME="+tmp))
	if err != nil {
		return err
	}
	cleanups = append(cleanups, plain.stop)
	if err := waitFor(plainAddr, plain); err != nil {
		return err
	}

	targets := []*target{
		{name: "direct", base: "http://" + upAddr, baseline: true, proc: up},
		{name: "plain Caddy", base: "http://" + plainAddr, admin: plainAdmin, baseline: true, proc: plain},
	}
	for _, m := range modes {
		t, err := startGateway(o, pin, m, gwConfig, tmp)
		if err != nil {
			return err
		}
		cleanups = append(cleanups, t.proc.stop)
		targets = append(targets, t)
	}
	maxConc := slices.Max(o.concs)
	for _, t := range targets {
		t.client = newClient(maxConc)
	}

	started := time.Now()
	fmt.Fprintf(os.Stderr, "bench: %d rounds of %d scenarios x %d concurrencies x %d targets, %s each\n",
		o.rounds, len(scenarios), len(o.concs), len(targets), o.dur)
	res := newResults()
	for r := range o.rounds {
		for _, s := range scenarios {
			for _, c := range o.concs {
				order := slices.Clone(targets)
				if r%2 == 1 {
					slices.Reverse(order)
				}
				for _, t := range order {
					x, err := measure(t, s, c, o.warm, o.dur)
					if err != nil {
						return fmt.Errorf("%v\n%s", err, tailOf(t))
					}
					res.add(s.name, c, t.name, x)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "bench: round %d done (%s)\n", r+1, time.Since(started).Round(time.Second))
	}

	var gws []*target
	for _, t := range targets {
		if !t.baseline {
			gws = append(gws, t)
		}
	}
	trips, err := countTrips(o, modes, gws)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: round trips counted (%s)\n", time.Since(started).Round(time.Second))
	var ping *redisPing
	for _, m := range modes {
		if m.redis != "" {
			rp, err := measureRedisPing(pin, m.redis)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: Redis PING not measured: %v\n", err)
				break
			}
			ping = &rp
		}
	}
	profiles, err := takeProfiles(o, targets[1], gws)
	if err != nil {
		return err
	}
	// Each proxy's CPU at /v1 JSON, concurrency 32, split by its profile.
	shares := make(map[string]map[string]float64)
	for _, t := range append([]*target{targets[1]}, gws...) {
		sh, err := cpuShares(filepath.Join(o.out, cpuProfileName(t, scenarios[0], 32)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: CPU profile of %s not read: %v\n", t.name, err)
			continue
		}
		shares[t.name] = sh
	}
	fmt.Fprintf(os.Stderr, "bench: profiles saved (%s)\n", time.Since(started).Round(time.Second))

	// The idle streams need a backend that never answers: their own.
	var idle []idleResult
	if o.idle > 0 {
		for _, t := range targets {
			t.client.CloseIdleConnections()
		}
		idle, err = idleStreams(o, pin, modes, gwConfig, tmp)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: idle streams measured (%s)\n", time.Since(started).Round(time.Second))
	}

	for _, x := range idle {
		profiles = append(profiles, x.profiles...)
	}
	md := report(o, pin, res, trips, ping, idle, shares, profiles, time.Since(started))
	fmt.Print(md)
	return os.WriteFile(filepath.Join(o.out, "latest.md"), []byte(md), 0o644)
}

func tailOf(t *target) string {
	if t.proc == nil {
		return ""
	}
	return t.proc.tail()
}

// raisedCaddyfile is the shipped Caddyfile with the limits raised out of
// the way: the bench measures the work per request, not the refusals.
// The rate's window stays the exact rolling one, whose log holds one entry
// per request admitted within it, but 10 ms long: a key at the spec's
// limits logs at most 150, and one bench key admitting thousands a second
// over a minute would log hundreds of thousands, whose expiry, a minute
// after a burst of load, lands on whatever requests come then. 256 per
// 10 ms (25,600 a second, several times what the bench sends) keeps the
// window in Redis the log a spec limit has (up to 256: docs/limits.md),
// so the admit script's time is that of the spec's limits.
func raisedCaddyfile(dir string) (string, error) {
	example, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		return "", err
	}
	raised := strings.Replace(string(example), "\tswitchyard {",
		"\tswitchyard {\n\t\tlimits {\n\t\t\trequests 256 10ms\n\t\t\tstreams 100000\n\t\t}", 1)
	if raised == string(example) {
		return "", fmt.Errorf("Caddyfile.example has no switchyard global block to raise the limits in")
	}
	path := filepath.Join(dir, "Caddyfile")
	return path, os.WriteFile(path, []byte(raised), 0o600)
}

// plainCaddyfile is plain Caddy laid out as Caddyfile.example is: a site
// of any Host on the port, bound to the host, so that neither pays for a
// host matcher and the nested route it puts the site in.
func plainCaddyfile(admin, addr, upstream string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("{\n\tadmin %s\n}\nhttp://:%s {\n\tbind %s\n\treverse_proxy %s\n}\n",
		admin, port, host, upstream)
}

const topUps = 20

// gatewayEnv is the environment every Switchyard mode shares: the demo
// backend at upAddr as its upstream.
func gatewayEnv(upAddr string) []string {
	return append(os.Environ(),
		"SWITCHYARD_UPSTREAM=http://"+upAddr+"/v1",
		"SWITCHYARD_UPSTREAM_MODEL=svc-3",
		"SWITCHYARD_KEY_SECRET="+randomHex(24),
	)
}

// startGateway starts Switchyard in mode m with a funded key.
func startGateway(o options, pin pinning, m *mode, config, tmp string) (*target, error) {
	addr, admin := freeAddr(), freeAddr()
	env := append(slices.Clone(m.env),
		"SWITCHYARD_PROFILE_CONTENTION="+map[bool]string{true: "1", false: "0"}[o.contention],
		"SWITCHYARD_LISTEN="+addr,
		"SWITCHYARD_ADMIN="+admin,
		"HOME="+filepath.Join(tmp, "home-"+m.name),
	)
	out, err := run(env, o.bin, "keys", "create", "--account", "bench")
	if err != nil {
		return nil, err
	}
	key := lastLine(out)
	// A top-up is at most $1,000; a run charges hundreds of thousands of
	// requests.
	for range topUps {
		if _, err := run(env, o.bin, "accounts", "topup", "--account", "bench", "--usd", "1000"); err != nil {
			return nil, err
		}
	}
	p, err := startProc("switchyard "+m.name, pin.command(pin.proxy, o.bin, "run", "--config", config, "--adapter", "caddyfile"), env)
	if err != nil {
		return nil, err
	}
	if err := waitFor(addr, p); err != nil {
		p.stop()
		return nil, err
	}
	return &target{name: "Switchyard " + m.name, base: "http://" + addr, key: key, admin: admin, proc: p}, nil
}

func init() {
	// Less of the load generator's own garbage collection, which shares
	// a CPU with the backend.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
