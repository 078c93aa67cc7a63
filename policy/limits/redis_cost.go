package limits

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// AdmitCost is what Redis spent running the admit script alone, read
// from INFO commandstats.
type AdmitCost struct {
	Calls int64 // admit script runs counted
	// MicrosPerCall is Redis's time per run, the commands the script ran
	// included: the median over the batches (MeasureAdmitCost) of each
	// batch's mean, so that a run the scheduler stopped halfway (a loaded
	// machine) moves one batch, not the figure.
	MicrosPerCall float64
	// MeanMicrosPerCall is the mean over every run counted.
	MeanMicrosPerCall float64
	// CommandsPerCall is the commands a run made from the script (TIME,
	// HMGET, ...), the EVALSHA itself not counted.
	CommandsPerCall float64
}

// admitCostBatch is how many admissions MeasureAdmitCost sends between
// two readings of commandstats. INFO between every two would cost the
// admission that follows it several microseconds (Redis's caches are
// cold after it), and one per batch costs a sixteenth of that.
const admitCostBatch = 16

// MeasureAdmitCost admits req n times through r and reads, from INFO
// commandstats before and after each batch of admissions, what Redis
// spent on the admit script alone. Each batch's slots and holds are
// released, and the releases flushed, before the next batch starts, so
// that the EVALSHAs between two readings are the admissions' (a
// settlement or a release would otherwise ride an admission's pipeline,
// and commandstats counts every EVALSHA together); up to a batch of
// streams is in flight at once. A batch during which Redis ran another
// script (another client's, a renewal) is left out. Unlike the slow log,
// commandstats costs Redis nothing per command: the slow log, told to
// log every command, logs each command a script runs too, and that adds
// to the script's time.
//
// It is for benchmarks: it needs a Redis that answers INFO, a rate that
// admits n requests, and a balance that covers n holds.
func MeasureAdmitCost(ctx context.Context, r *Redis, req AdmitRequest, n int) (AdmitCost, error) {
	taken := make([]Admission, 0, admitCostBatch)
	return r.measureScript(ctx, n, func() error {
		a, err := r.Admit(ctx, req)
		if err != nil {
			return err
		}
		if a.Fallback {
			return fmt.Errorf("limits: Redis did not answer an admission")
		}
		taken = append(taken, a)
		return nil
	}, func() {
		for _, a := range taken {
			a.Hold.Release()
			a.Lease.Release()
		}
		taken = taken[:0]
		r.Flush()
	})
}

// emptyScript answers as the admit script does, one string of eight
// doubles, and runs no command.
var emptyScript = redis.NewScript(`return struct.pack("<dddddddd", 1, 1, 0, 0, 0, 0, 0, 0)`)

// MeasureEmptyScriptCost measures, as MeasureAdmitCost does, a script
// that runs no command and answers as the admit script does: the floor
// of any admission made in one script on r's Redis, the part of the
// admit script's time its commands do not explain. It is for benchmarks.
func MeasureEmptyScriptCost(ctx context.Context, r *Redis, n int) (AdmitCost, error) {
	if err := emptyScript.Load(ctx, r.client).Err(); err != nil {
		return AdmitCost{}, err
	}
	return r.measureScript(ctx, n, func() error { return emptyScript.EvalSha(ctx, r.client, nil).Err() }, func() {})
}

// measureScript runs call n times, in batches of admitCostBatch between
// two readings of commandstats, and then between before the next batch
// (what call took is given back there, outside the readings). A batch
// during which Redis ran an EVALSHA of another client's is left out.
func (r *Redis) measureScript(ctx context.Context, n int, call func() error, between func()) (AdmitCost, error) {
	var cost AdmitCost
	var usec, inner int64
	var batchMeans []float64
	for done := 0; done < n; {
		k := min(admitCostBatch, n-done)
		before, err := r.commandStats(ctx)
		if err != nil {
			return cost, err
		}
		for range k {
			if err := call(); err != nil {
				return cost, err
			}
		}
		after, err := r.commandStats(ctx)
		if err != nil {
			return cost, err
		}
		between()
		done += k
		calls := after["evalsha"].Calls - before["evalsha"].Calls
		if calls != int64(k) {
			continue // Redis ran other scripts meanwhile
		}
		took := after["evalsha"].Usec - before["evalsha"].Usec
		cost.Calls += calls
		usec += took
		batchMeans = append(batchMeans, float64(took)/float64(calls))
		for name, st := range after {
			if !notAdmissionCommand(name) {
				inner += st.Calls - before[name].Calls
			}
		}
	}
	if cost.Calls == 0 {
		return cost, fmt.Errorf("limits: Redis ran other scripts during every batch of calls")
	}
	slices.Sort(batchMeans)
	cost.MicrosPerCall = batchMeans[len(batchMeans)/2]
	cost.MeanMicrosPerCall = float64(usec) / float64(cost.Calls)
	cost.CommandsPerCall = float64(inner) / float64(cost.Calls)
	return cost, nil
}

// notAdmissionCommand tells the commands MeasureAdmitCost and the client send
// (a new connection's handshake) from those the admissions made.
func notAdmissionCommand(name string) bool {
	return name == "evalsha" || name == "info" || name == "hello" || name == "ping" || strings.HasPrefix(name, "client")
}

// CommandStat is one command's line of INFO commandstats: its calls and
// the microseconds Redis spent in them.
type CommandStat struct{ Calls, Usec int64 }

// ParseCommandStats reads the answer to INFO commandstats, by command
// name ("evalsha", "hset", a subcommand as "client|setinfo").
func ParseCommandStats(info string) map[string]CommandStat {
	out := make(map[string]CommandStat)
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, fields, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st CommandStat
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.Usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = st
	}
	return out
}

// commandStats reads INFO commandstats of r's Redis.
func (r *Redis) commandStats(ctx context.Context) (map[string]CommandStat, error) {
	info, err := r.client.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := ParseCommandStats(info)
	if len(out) == 0 {
		return nil, fmt.Errorf("limits: no commandstats in INFO's answer")
	}
	return out, nil
}
