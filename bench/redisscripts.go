package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
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
