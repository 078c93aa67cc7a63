package limits

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkRedisBilledStream is what one billed stream costs Redis, as
// the gateway runs it: an admission with a rate (a rolling window), a
// stream slot and a balance hold, then the hold settled and the slot
// released. Besides time and allocations in the process it reports,
// from INFO commandstats, the commands Redis ran per request (those
// inside scripts included) and the microseconds Redis spent in the
// scripts: these are only the benchmark's own on a Redis nothing else
// uses (SWITCHYARD_TEST_REDIS).
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
	before := commandStats(b, c)
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
	after := commandStats(b, c)
	var calls, usec int64
	for name, st := range after {
		calls += st.calls - before[name].calls
		if name == "evalsha" || name == "eval" {
			usec += st.usec - before[name].usec
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
}

type cmdStat struct{ calls, usec int64 }

// commandStats reads INFO commandstats: per command, its calls and the
// microseconds Redis spent in them.
func commandStats(b *testing.B, c *redis.Client) map[string]cmdStat {
	b.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	out := make(map[string]cmdStat)
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, fields, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st cmdStat
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = st
	}
	if len(out) == 0 {
		b.Fatal(fmt.Sprintf("no commandstats in %q", info))
	}
	return out
}
