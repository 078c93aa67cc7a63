package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// trips is what one request of a scenario costs a mode in round trips to
// its stores, counted over many requests sent one at a time.
type trips struct {
	mode, scenario string
	n              int
	// From the gateway's switchyard_sqlite_statements_total, or
	// switchyard_postgres_statements_total (no statements in write
	// transactions).
	sqlReads, sqlTxs, sqlTxStatements float64
	// PostgreSQL, from pg_stat_database of the bench's own database.
	pgXacts, pgRowsWritten float64
	// Redis: round trips from the gateway's counter, commands from INFO
	// commandstats of the bench's own Redis.
	redisTrips    float64 // from the gateway's switchyard_redis_round_trips_total
	redisCommands float64 // run by Redis, scripts' inner commands included
	redisBy       string  // per command
	// From Redis's slow log: every command the gateway sent, with its
	// time.
	redisTimes redisTimes
	// Whether the row is from SQLite or PostgreSQL and Redis.
	distributed bool
}

// pgFlush is how long PostgreSQL 15 may take to publish a connection's
// statistics after it goes idle.
const pgFlush = 11 * time.Second

func countTrips(o options, modes []*mode, gws []*target) ([]trips, error) {
	var out []trips
	counted := scenarios
	if o.quick {
		counted = []scenario{scenarios[0], scenarios[3]}
	}
	for i, m := range modes {
		t := gws[i]
		switch m.name {
		case "embedded":
			for _, s := range counted {
				grew, err := countGrowth(t, s, o.counts, "switchyard_sqlite_statements_total")
				if err != nil {
					return nil, err
				}
				per := func(kind string) float64 {
					return perRequest(grew, "switchyard_sqlite_statements_total", kind, o.counts)
				}
				out = append(out, trips{mode: m.name, scenario: s.name, n: o.counts,
					sqlReads: per("read"), sqlTxs: per("transaction"), sqlTxStatements: per("in_transaction")})
			}
		case "distributed":
			time.Sleep(pgFlush)
			pgBefore, err := pgStats(m.pgURL)
			if err != nil {
				return nil, err
			}
			pingsBefore, err := feedPings(t)
			if err != nil {
				return nil, err
			}
			for _, s := range counted {
				rBefore, err := redisCalls(m.redis)
				if err != nil {
					return nil, err
				}
				if err := startRedisTimes(m.redis); err != nil {
					return nil, err
				}
				tGrew, err := countGrowth(t, s, o.counts, "switchyard_")
				if err != nil {
					return nil, err
				}
				rAfter, err := redisCalls(m.redis)
				if err != nil {
					return nil, err
				}
				times, err := readRedisTimes(m.redis)
				if err != nil {
					return nil, err
				}
				time.Sleep(pgFlush)
				pgAfter, err := pgStats(m.pgURL)
				if err != nil {
					return nil, err
				}
				pingsAfter, err := feedPings(t)
				if err != nil {
					return nil, err
				}
				n := float64(o.counts)
				pg := func(kind string) float64 {
					return perRequest(tGrew, "switchyard_postgres_statements_total", kind, o.counts)
				}
				var total int64
				var by []string
				for _, name := range slices.Sorted(maps.Keys(rAfter)) {
					if d := rAfter[name].Calls - rBefore[name].Calls; d > 0 {
						total += d
						by = append(by, fmt.Sprintf("%s %.2f", name, float64(d)/n))
					}
				}
				out = append(out, trips{mode: m.name, scenario: s.name, n: o.counts, distributed: true,
					sqlReads: pg("read"), sqlTxs: pg("transaction"),
					// One transaction is the previous reading's own; the
					// commit feed's pings are not the requests', and each
					// is two on the server: the NOTIFY and its delivery.
					pgXacts:       float64(pgAfter.xacts-pgBefore.xacts-1-2*int64(pingsAfter-pingsBefore)) / n,
					pgRowsWritten: float64(pgAfter.written-pgBefore.written) / n,
					redisTrips:    tGrew["switchyard_redis_round_trips_total"] / n,
					redisCommands: float64(total) / n,
					redisBy:       strings.Join(by, ", "),
					redisTimes:    times,
				})
				pgBefore, pingsBefore = pgAfter, pingsAfter
			}
		}
	}
	return out, nil
}

// perRequest is the growth of one kind of a labelled counter, per request.
func perRequest(grew map[string]float64, metric, kind string, requests int) float64 {
	return grew[metric+`{kind="`+kind+`"}`] / float64(requests)
}

// feedPings is how many statements t's commit feed has sent, which
// pg_stat_database counts as transactions.
func feedPings(t *target) (float64, error) {
	m, err := scrape(t.admin, "switchyard_postgres_statements_total")
	return m[`switchyard_postgres_statements_total{kind="feed_ping"}`], err
}

// countGrowth sends a scenario's requests one at a time and returns how much
// each series of the gateway's metric grew meanwhile.
func countGrowth(t *target, s scenario, n int, metric string) (map[string]float64, error) {
	before, err := scrape(t.admin, metric)
	if err != nil {
		return nil, err
	}
	if err := count(t, s, n); err != nil {
		return nil, err
	}
	after, err := scrape(t.admin, metric)
	if err != nil {
		return nil, err
	}
	grew := make(map[string]float64, len(after))
	for k, v := range after {
		grew[k] = v - before[k]
	}
	return grew, nil
}

// takeProfiles saves a CPU profile of each gateway under load in every
// scenario at concurrency 32 (and 1 outside quick runs), and its
// allocation profile; and plain Caddy's CPU profile of /v1 JSON at 32,
// the baseline of the report's breakdown of the added CPU.
func takeProfiles(o options, plain *target, gws []*target) ([]string, error) {
	var files []string
	if plain != nil && plain.admin != "" {
		name := cpuProfileName(plain, scenarios[0], 32)
		path := fmt.Sprintf("profile?seconds=%d", int(o.profile.Seconds()))
		if err := profileUnderLoad(plain, scenarios[0], 32, o.profile, path, filepath.Join(o.out, name)); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	concs := []int{32, 1}
	if o.quick {
		concs = []int{32}
	}
	for _, t := range gws {
		slug := strings.ToLower(strings.TrimPrefix(t.name, "Switchyard "))
		for _, s := range scenarios {
			for _, c := range concs {
				name := cpuProfileName(t, s, c)
				path := fmt.Sprintf("profile?seconds=%d", int(o.profile.Seconds()))
				if err := profileUnderLoad(t, s, c, o.profile, path, filepath.Join(o.out, name)); err != nil {
					return nil, err
				}
				files = append(files, name)
			}
		}
		if o.trace {
			// An execution trace shows what a request waited for, which
			// a CPU profile cannot: the tail latency at concurrency 1.
			for _, s := range scenarios {
				name := fmt.Sprintf("trace-%s-%s-c1.out", slug, s.slug())
				if err := profileUnderLoad(t, s, 1, time.Second, "trace?seconds=1", filepath.Join(o.out, name)); err != nil {
					return nil, err
				}
				files = append(files, name)
			}
		}
		kinds := []string{"allocs"}
		if o.contention {
			kinds = append(kinds, "mutex", "block")
		}
		for _, kind := range kinds {
			name := fmt.Sprintf("%s-%s.pprof", kind, slug)
			if err := fetchProfile(t.admin, kind, filepath.Join(o.out, name)); err != nil {
				return nil, err
			}
			files = append(files, name)
		}
	}
	return files, nil
}

// cpuProfileName is the file of t's CPU profile under s at concurrency c.
func cpuProfileName(t *target, s scenario, c int) string {
	slug := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(t.name, "Switchyard ")), " caddy", "")
	return fmt.Sprintf("cpu-%s-%s-c%d.pprof", slug, s.slug(), c)
}

// profileUnderLoad saves t's /debug/pprof/<path>, which takes d, to file
// while s loads t at concurrency conc a little longer than that.
func profileUnderLoad(t *target, s scenario, conc int, d time.Duration, path, file string) error {
	done := make(chan error, 1)
	go func() {
		_, _, err := drive(t, s, conc, d+500*time.Millisecond)
		done <- err
	}()
	err := fetchProfile(t.admin, path, file)
	if lerr := <-done; lerr != nil {
		return lerr
	}
	return err
}

// idleResult is the memory that n idle open streams took.
type idleResult struct {
	target, scenario string
	opened, wanted   int
	before, after    int64    // KiB
	profiles         []string // heap and goroutine profiles taken with the streams open
	split            memSplit // what the RSS per stream is made of
}

func (r idleResult) perStream() float64 {
	if r.opened == 0 {
		return 0
	}
	return float64(r.after-r.before) / float64(r.opened)
}

// idleStreams opens o.idle streams against a backend that never answers
// (its first token comes after an hour) through plain Caddy (/v1) and each
// gateway (/v3), and reads how much the process's resident memory grew.
func idleStreams(o options, pin pinning, modes []*mode, config, tmp string) ([]idleResult, error) {
	slowAddr := freeAddr()
	slow, err := startProc("slow demo backend", pin.command(pin.aux, o.bin, "demo-backend", "--listen", slowAddr, "--ttft", "1h"), os.Environ())
	if err != nil {
		return nil, err
	}
	defer slow.stop()
	if err := waitFor(slowAddr, slow); err != nil {
		return nil, err
	}
	var out []idleResult

	plainAddr, plainAdmin := freeAddr(), freeAddr()
	cfg := filepath.Join(tmp, "Caddyfile.plain-idle")
	if err := os.WriteFile(cfg, []byte(plainCaddyfile(plainAdmin, plainAddr, slowAddr)), 0o600); err != nil {
		return nil, err
	}
	p, err := startProc("plain Caddy (idle)", pin.command(pin.proxy, o.bin, "run", "--config", cfg, "--adapter", "caddyfile"),
		append(os.Environ(), "HOME="+tmp))
	if err != nil {
		return nil, err
	}
	if err := waitFor(plainAddr, p); err != nil {
		return nil, err
	}
	r, err := holdIdle(o.idle, p, &target{name: "plain Caddy", base: "http://" + plainAddr, admin: plainAdmin, baseline: true}, scenarios[1], "")
	p.stop()
	if err != nil {
		return nil, err
	}
	out = append(out, r)

	for _, m := range modes {
		m2 := *m
		m2.env = append(append([]string(nil), m.env...), "SWITCHYARD_UPSTREAM=http://"+slowAddr+"/v1")
		t, err := startGateway(o, pin, &m2, config, tmp)
		if err != nil {
			return nil, err
		}
		r, err := holdIdle(o.idle, t.proc, t, scenarios[3], o.out)
		t.proc.stop()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// idleSettle is how long after its streams start opening a target's
// memory is read, the same for every target: plain Caddy sends a /v1
// stream's headers only with the backend's, which never come, and a
// gateway sends a /v3 stream's at once, so waiting for the headers
// alone gave plain Caddy fifteen seconds more for its collector and
// scavenger than the gateways had.
const idleSettle = 16 * time.Second

// holdIdle opens n streams of s to t and measures p's memory before and
// idleSettle after they started opening (a stream that has no response
// headers by then is counted open unless its request failed).
func holdIdle(n int, p *proc, t *target, s scenario, outDir string) (idleResult, error) {
	res := idleResult{target: t.name, scenario: s.name, wanted: n}
	t.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	time.Sleep(time.Second)
	var err error
	if res.before, err = rssKiB(p.pid()); err != nil {
		return res, err
	}
	classes := readMemClasses(p.pid(), t.admin, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		failed   atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Value
	)
	path, body := s.request(t)
	opening := time.Now()
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if t.key != "" {
				req.Header.Set("Authorization", "Bearer "+t.key)
			}
			resp, err := t.client.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, fmt.Sprintf("status %d", resp.StatusCode))
				return
			}
			<-ctx.Done()
		})
	}
	time.Sleep(time.Until(opening.Add(idleSettle)))
	res.opened = n - int(failed.Load())
	res.after, err = rssKiB(p.pid())
	res.split = splitMemory(classes, p.pid(), t.admin, res.opened)
	fmt.Fprintf(os.Stderr, "bench: idle %s, %s\n", t.name, res.split)
	if t.admin != "" && outDir != "" {
		// What the open streams hold: live heap and goroutines.
		slug := strings.ToLower(strings.TrimPrefix(t.name, "Switchyard "))
		for _, kind := range []string{"heap", "goroutine"} {
			name := fmt.Sprintf("idle-%s-%s.pprof", kind, slug)
			if ferr := fetchProfile(t.admin, kind, filepath.Join(outDir, name)); ferr == nil {
				res.profiles = append(res.profiles, name)
			}
		}
	}
	cancel()
	wg.Wait()
	t.client.CloseIdleConnections()
	if f := failed.Load(); f > 0 {
		return res, fmt.Errorf("%s: %d of %d idle streams failed: %v", t.name, f, n, firstErr.Load())
	}
	return res, err
}
