package limits

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkRedisBilledStream is what one billed stream costs Redis, as
// the gateway runs it: an admission with a rate (a rolling window), a
// stream slot and a balance hold, then the hold settled and the slot
// released. Besides time and allocations in the process it reports,
// from INFO commandstats, the commands Redis ran per request (those
// inside scripts included) and the microseconds Redis spent in the
// scripts, and from the slow log, told to log every command, each
// script's median time per request: these are only the benchmark's own
// on a Redis nothing else uses (SWITCHYARD_TEST_REDIS).
//
// Then, with the slow log back to its default (logging every command
// adds to a script's time the logging of each command it runs), it
// admits the same request alone (MeasureAdmitCost): admit-µs/call is
// Redis's time per run of the admit script from commandstats (the
// median of batches' means; admit-mean-µs/call the mean of all runs), and
// admit-cmds/call the commands each run made; empty-script-µs/call is
// the same for a script that runs no command (MeasureEmptyScriptCost).
//
// Neither rate refuses: "zset" is the bench's (10^8 a second, a
// window kept as a sorted set), "log" one within rollingLogMax (256 per
// 10 ms, kept as a log), as the spec's limits are; "log-json" is a
// billed request without a stream slot.
func BenchmarkRedisBilledStream(b *testing.B) {
	big := Rate{Limit: 100000000, Period: time.Second, Rolling: true}
	small := Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true}
	b.Run("zset", func(b *testing.B) { benchmarkRedisBilled(b, big, true) })
	b.Run("log", func(b *testing.B) { benchmarkRedisBilled(b, small, true) })
	b.Run("log-json", func(b *testing.B) { benchmarkRedisBilled(b, small, false) })
}

// admitCostRuns is how many admissions the admit-only part of
// BenchmarkRedisBilledStream measures.
const admitCostRuns = 2048

func benchmarkRedisBilled(b *testing.B, rate Rate, stream bool) {
	c := testRedisClient(b)
	prefix := testPrefix(b, c)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := AdmitRequest{Key: "key", Rate: rate,
		StreamLimit: 100000, WantLease: stream,
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	// One admission loads the scripts before counting starts.
	if a, err := r.Admit(ctx, req); err != nil {
		b.Fatal(err)
	} else {
		a.Hold.Settle(1)
		a.Lease.Release()
	}
	// Every command goes to the slow log, to tell the scripts apart.
	for _, kv := range [][2]string{{"slowlog-log-slower-than", "0"}, {"slowlog-max-len", "1000000"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			b.Fatal(err)
		}
	}
	defer c.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
	c.SlowLogReset(ctx)
	before := commandStats(b, r)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		a, err := r.Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		a.Hold.Settle(1)
		a.Lease.Release()
	}
	b.StopTimer()
	r.Flush()
	after := commandStats(b, r)
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err(); err != nil {
		b.Fatal(err)
	}
	var calls, usec int64
	for name, st := range after {
		if notAdmissionCommand(name) && name != "evalsha" {
			continue
		}
		calls += st.Calls - before[name].Calls
		if name == "evalsha" || name == "eval" {
			usec += st.Usec - before[name].Usec
		}
	}
	b.ReportMetric(float64(calls)/float64(b.N), "redis-cmds/op")
	log, err := c.Do(ctx, "SLOWLOG", "GET", "-1").Slice()
	if err != nil {
		b.Fatal(err)
	}
	names := ScriptNames()
	took := map[string][]float64{}
	for _, e := range log {
		f, _ := e.([]any)
		if len(f) < 4 {
			continue
		}
		args, _ := f[3].([]any)
		if len(args) < 2 {
			continue
		}
		if name, ok := names[fmt.Sprint(args[1])]; ok {
			us, _ := f[2].(int64)
			took[name] = append(took[name], float64(us))
		}
	}
	for name, us := range took {
		slices.Sort(us)
		b.ReportMetric(us[len(us)/2], strings.ReplaceAll(name, " ", "-")+"-p50-µs")
	}
	b.ReportMetric(float64(usec)/float64(b.N), "redis-script-µs/op")

	cost, err := MeasureAdmitCost(ctx, r, req, admitCostRuns)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(cost.MicrosPerCall, "admit-µs/call")
	b.ReportMetric(cost.MeanMicrosPerCall, "admit-mean-µs/call")
	b.ReportMetric(cost.CommandsPerCall, "admit-cmds/call")
	empty, err := MeasureEmptyScriptCost(ctx, r, admitCostRuns)
	if err != nil {
		b.Fatal(err)
	}
	if empty.CommandsPerCall != 0 {
		b.Fatalf("a script that runs no command ran %.1f a call", empty.CommandsPerCall)
	}
	b.ReportMetric(empty.MicrosPerCall, "empty-script-µs/call")
}

// commandStats reads INFO commandstats of r's Redis.
func commandStats(b *testing.B, r *Redis) map[string]CommandStat {
	b.Helper()
	st, err := r.commandStats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return st
}
