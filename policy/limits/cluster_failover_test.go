package limits

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// Failover under load. Two keys of one account are admitted by eight
// goroutines, each admission a rolling rate, a stream slot and a hold,
// while the primary serving the account is failed over. The limits fail
// closed, so what Redis cannot decide is refused. What must hold:
//
//   - no key is admitted more than its rate, counted over the whole run;
//   - no key holds more slots at once than its limit, and the account's
//     holds never exceed its balance;
//   - admissions go on after the failover, until the rate is spent;
//   - once every request has released, no slot and no hold is left.
const (
	failoverRate    = 400 // per key, per hour: spent only after the failover
	failoverStreams = 2   // per key
	failoverBalance = 30  // cents; each request wants 10
)

func TestClusterManualFailoverUnderLoad(t *testing.T) {
	cluster := testenv.StartRedisCluster(t)
	runFailover(t, cluster.URL(), RedisCluster, 30*time.Second, func(l *Redis, c redis.UniversalClient) {
		primary := primaryOf(t, c, l.balanceKey("acct"))
		replica := cluster.Node(replicaOf(t, cluster.Node(primary)))
		cl := replica.Client()
		defer cl.Close()
		// The replica waits until it has everything its primary acknowledged,
		// then takes over: nothing is lost.
		if err := cl.Do(context.Background(), "CLUSTER", "FAILOVER").Err(); err != nil {
			t.Fatalf("CLUSTER FAILOVER on %s: %v", replica.Addr(), err)
		}
		waitPrimary(t, replica)
	}, true)
}

func TestClusterPrimaryCrashUnderLoad(t *testing.T) {
	cluster := testenv.StartRedisCluster(t)
	const leaseTTL = 3 * time.Second
	runFailover(t, cluster.URL(), RedisCluster, leaseTTL, func(l *Redis, c redis.UniversalClient) {
		primary := cluster.Node(primaryOf(t, c, l.balanceKey("acct")))
		replica := cluster.Node(replicaOf(t, primary))
		// SIGKILL: what the primary acknowledged and had not yet sent to
		// the replica is lost; on loopback that is next to nothing once
		// the replica is in step, and the slots and holds it may leave
		// expire within the lease TTL. A replica still on its first sync
		// (a loaded machine delays it) would take over with nothing: that
		// is Redis losing a whole dataset, not the window this test is
		// about, so the kill waits for the replica to be in step.
		waitInStep(t, primary, replica)
		primary.Kill()
		waitPrimary(t, replica)
	}, false)
}

// runFailover runs the load, calls failover once a third of the rate
// is spent, and checks what must hold (see above). exact: every call was
// answered, so each key was admitted exactly its rate.
func runFailover(t *testing.T, url string, mode RedisMode, leaseTTL time.Duration, failover func(*Redis, redis.UniversalClient), exact bool) {
	l, c := clusterLimiter(t, url, mode, RedisConfig{
		RatePolicy: FailClosed, StreamPolicy: FailClosed, Timeout: 500 * time.Millisecond, LeaseTTL: leaseTTL,
		Breaker: BreakerConfig{CoolDown: 100 * time.Millisecond, MaxCoolDown: 400 * time.Millisecond},
	})
	keys := []string{"k1", "k2"}
	var (
		admitted, streams, maxStreams [2]atomic.Int64
		held, maxHeld                 atomic.Int64
		unavailable, afterFailover    atomic.Int64
		spent                         [2]atomic.Bool // the key's rate refused it after the failover
		failedOver, stop              atomic.Bool
	)
	raise := func(max *atomic.Int64, v int64) {
		for m := max.Load(); v > m && !max.CompareAndSwap(m, v); m = max.Load() {
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		k := g % 2
		wg.Go(func() {
			for !stop.Load() {
				adm, err := l.Admit(context.Background(), AdmitRequest{
					Key: keys[k], Account: "acct", Rate: Rate{Limit: failoverRate, Period: time.Hour, Rolling: true},
					StreamLimit: failoverStreams, WantLease: true,
					Reserve: Reservation{Account: "acct", Balance: failoverBalance, Want: 10, Min: 1},
				})
				switch {
				case err == nil:
					admitted[k].Add(1)
					if failedOver.Load() {
						afterFailover.Add(1)
					}
					raise(&maxStreams[k], streams[k].Add(1))
					raise(&maxHeld, held.Add(adm.Hold.Cents()))
					time.Sleep(2 * time.Millisecond) // the request runs
					streams[k].Add(-1)
					held.Add(-adm.Hold.Cents())
					adm.Hold.Release()
					adm.Lease.Release()
					continue
				case errors.Is(err, ErrUnavailable):
					unavailable.Add(1)
				case refusedBy(err, LimitRequests) && failedOver.Load():
					spent[k].Store(true)
				}
				time.Sleep(time.Millisecond) // a client backs off
			}
		})
	}
	// The run takes a few seconds; the deadline only ends one that hangs,
	// and a loaded machine may take many times as long.
	deadline := time.Now().Add(2 * time.Minute)
	for admitted[0].Load()+admitted[1].Load() < 2*failoverRate/3 {
		if time.Now().After(deadline) {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("only %d admitted before the failover", admitted[0].Load()+admitted[1].Load())
		}
		time.Sleep(time.Millisecond)
	}
	began := time.Now()
	failover(l, c)
	failedOver.Store(true)
	tookOver := time.Since(began)
	for !(spent[0].Load() && spent[1].Load()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	l.Flush()
	t.Logf("failed over in %s; admitted %d and %d, %d after the failover; %d refused as unavailable; %d failed calls",
		tookOver.Round(time.Millisecond), admitted[0].Load(), admitted[1].Load(), afterFailover.Load(), unavailable.Load(), l.Stats().Failures)

	ended := spent[0].Load() && spent[1].Load()
	if !ended {
		t.Errorf("the keys' rates were not spent after the failover (admitted %d and %d of %d): admissions did not resume",
			admitted[0].Load(), admitted[1].Load(), failoverRate)
	}
	for k := range keys {
		// Fewer admissions than the rate are lost ones only when the run
		// went on until the rate refused both keys: a run the deadline
		// ended is reported above.
		if n := admitted[k].Load(); n > failoverRate || exact && ended && l.Stats().Failures == 0 && n != failoverRate {
			t.Errorf("%s admitted %d times, rate %d: the failover lost admissions", keys[k], n, failoverRate)
		}
		if n := maxStreams[k].Load(); n > failoverStreams {
			t.Errorf("%s held %d slots at once, limit %d", keys[k], n, failoverStreams)
		}
	}
	if n := maxHeld.Load(); n > failoverBalance {
		t.Errorf("the account held %d cents at once, balance %d", n, failoverBalance)
	}
	ctx := context.Background()
	var left int64
	for wait := time.Now().Add(leaseTTL + time.Second); ; {
		left = c.ZCard(ctx, l.holdsKey("acct")).Val()
		for _, k := range keys {
			left += c.ZCard(ctx, l.leaseKey("acct", k)).Val()
		}
		if left == 0 || time.Now().After(wait) || exact {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if left != 0 {
		t.Errorf("%d slots and holds left after every request released", left)
	}
	window := c.ZCard(ctx, l.windowKey("acct", keys[0])).Val()
	if window != failoverRate {
		t.Errorf("the rate window of %s counts %d admissions after it refused, want %d", keys[0], window, failoverRate)
	}
}

// replicaOf is the address of a replica of the cluster primary p. It
// waits until p knows one: a cluster just started tells its nodes of
// their replicas by gossip, which a loaded machine delays.
func replicaOf(t *testing.T, p *testenv.RedisServer) string {
	t.Helper()
	ctx := context.Background()
	cl := p.Client()
	defer cl.Close()
	id, err := cl.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		lines, err = cl.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
		if err == nil && len(lines) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas of %s: %v %v", p.Addr(), lines, err)
		}
	}
	addr, _, _ := strings.Cut(strings.Fields(lines[0])[1], "@")
	return addr
}

// waitPrimary waits until s says it is a primary.
// waitInStep waits until replica's link to primary is up and it has
// everything primary had written when the wait began.
func waitInStep(t *testing.T, primary, replica *testenv.RedisServer) {
	t.Helper()
	ctx := context.Background()
	pc, rc := primary.Client(), replica.Client()
	defer pc.Close()
	defer rc.Close()
	written := infoInt(t, pc.Info(ctx, "replication").Val(), "master_repl_offset")
	deadline := time.Now().Add(15 * time.Second)
	for {
		info := rc.Info(ctx, "replication").Val()
		if strings.Contains(info, "master_link_status:up") && infoInt(t, info, "slave_repl_offset") >= written {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never caught up with %s's offset %d:\n%s", replica.Addr(), primary.Addr(), written, info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// infoInt is the integer field name of an INFO reply, -1 when it has none.
func infoInt(t *testing.T, info, name string) int64 {
	t.Helper()
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %v", name, err)
			}
			return n
		}
	}
	return -1
}

func waitPrimary(t *testing.T, s *testenv.RedisServer) {
	t.Helper()
	cl := s.Client()
	defer cl.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		role, err := cl.Do(context.Background(), "ROLE").Slice()
		if err == nil && len(role) > 0 && role[0] == "master" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not take over: %v %v", s.Addr(), role, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
