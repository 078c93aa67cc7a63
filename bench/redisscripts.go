package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/policy/limits"
)

// redisTimes is what Redis's slow log, told to log every command, shows
// of the commands the gateway sent while a scenario was counted. Unlike
// INFO commandstats, which adds up all EVALSHA calls and counts a
// script's inner commands twice (on their own and in the script's
// time), it has the time of each command as sent, scripts told apart by
// their SHA1.
type redisTimes struct {
	total   float64              // µs, every command the gateway sent
	scripts map[string][]float64 // µs per call, by script name
	// admitAlone is the admit script's time per call from commandstats,
	// with the slow log back to its default (probeAdmit); zero when it
	// was not measured.
	admitAlone limits.AdmitCost
	// emptyScript is what a script that runs no command costs this Redis
	// per call, measured as admitAlone is: the floor of any admission
	// made in one script, the part of admitAlone its commands do not
	// explain; NaN when it was not measured.
	emptyScript float64
}

// median is the median µs per call of the script named name; NaN when
// it did not run.
func (t redisTimes) median(name string) float64 { return median(t.scripts[name]) }

// describe lists each script that ran: its calls per request and median
// µs per call.
func (t redisTimes) describe(requests int) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(t.scripts)) {
		calls := t.scripts[name]
		out = append(out, fmt.Sprintf("%s %.2f × %.0f µs", name, float64(len(calls))/float64(requests), median(calls)))
	}
	if a := t.admitAlone; a.Calls > 0 {
		out = append(out, fmt.Sprintf("admit alone, no slow log: %.1f µs (mean %.1f), %.1f commands a call", a.MicrosPerCall, a.MeanMicrosPerCall, a.CommandsPerCall))
	}
	if t.emptyScript > 0 {
		out = append(out, fmt.Sprintf("a script that runs no command: %.1f µs", t.emptyScript))
	}
	return strings.Join(out, ", ")
}

// benchCommands are the commands the bench itself sends Redis, left out
// of the gateway's time.
var benchCommands = map[string]bool{"info": true, "slowlog": true, "config": true, "hello": true, "client": true}

// startRedisTimes has Redis at addr log every command from now on, in a
// slow log emptied first.
func startRedisTimes(addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, kv := range [][2]string{{"slowlog-max-len", "1000000"}, {"slowlog-log-slower-than", "0"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return err
		}
	}
	return c.SlowLogReset(ctx).Err()
}

// readRedisTimes reads what Redis at addr logged since startRedisTimes,
// and puts the slow log back to Redis's default.
func readRedisTimes(addr string) (redisTimes, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// -1: every entry (Redis 7).
	entries, err := c.Do(ctx, "SLOWLOG", "GET", "-1").Slice()
	if err != nil {
		return redisTimes{}, err
	}
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err(); err != nil {
		return redisTimes{}, err
	}
	names := limits.ScriptNames()
	t := redisTimes{scripts: make(map[string][]float64)}
	if t.admitAlone, err = probeAdmit(ctx, c); err != nil {
		return redisTimes{}, err
	}
	if t.emptyScript, err = probeEmptyScript(ctx, c); err != nil {
		return redisTimes{}, err
	}
	for _, e := range entries {
		f, _ := e.([]any)
		if len(f) < 4 {
			continue
		}
		took, _ := f[2].(int64)
		args, _ := f[3].([]any)
		if len(args) == 0 {
			continue
		}
		cmd := strings.ToLower(fmt.Sprint(args[0]))
		if benchCommands[cmd] {
			continue
		}
		t.total += float64(took)
		if cmd == "evalsha" && len(args) > 1 {
			name := names[fmt.Sprint(args[1])]
			if name == "" {
				name = "other script"
			}
			t.scripts[name] = append(t.scripts[name], float64(took))
		}
	}
	return t, nil
}

// probeAdmitCalls is how many admissions probeAdmit measures.
const probeAdmitCalls = 512

// probeSeq tells one probe's keys from another's.
var probeSeq atomic.Int64

// probeAdmit measures the admit script's time per call on the Redis of c
// from INFO commandstats, with the slow log back to its default: the
// slow log, told to log every command, logs each command a script runs
// too, and that adds to the script's time the slow log's medians show.
// It admits, under keys of its own, a billed stream as the gateway's
// are (a rolling rate kept as a log, a slot, a hold), in batches whose
// slots and holds it releases before the next (limits.MeasureAdmitCost),
// and leaves out a batch during which Redis ran another script (the
// gateway's renewals or releases). Its keys expire by themselves.
func probeAdmit(ctx context.Context, c *redis.Client) (limits.AdmitCost, error) {
	r, err := probeLimiter(c)
	if err != nil {
		return limits.AdmitCost{}, err
	}
	req := limits.AdmitRequest{Key: "probe", Account: "probe",
		Rate:        limits.Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true},
		StreamLimit: 1000, WantLease: true,
		Reserve: limits.Reservation{Account: "probe", Balance: 1 << 40, Want: 4, Min: 1}}
	return limits.MeasureAdmitCost(ctx, r, req, probeAdmitCalls)
}

// probeLimiter is a limiter on c under keys of its own, for the probes.
func probeLimiter(c *redis.Client) (*limits.Redis, error) {
	return limits.NewRedis(limits.RedisConfig{Client: c,
		Prefix: fmt.Sprintf("switchyard:bench-probe:%d:%d:", time.Now().UnixNano(), probeSeq.Add(1))})
}

// probeEmptyScript is what a script that runs no command costs the Redis
// of c per call (limits.MeasureEmptyScriptCost), the median of batches.
func probeEmptyScript(ctx context.Context, c *redis.Client) (float64, error) {
	r, err := probeLimiter(c)
	if err != nil {
		return math.NaN(), err
	}
	cost, err := limits.MeasureEmptyScriptCost(ctx, r, probeAdmitCalls)
	if err != nil {
		return math.NaN(), err
	}
	return cost.MicrosPerCall, nil
}
