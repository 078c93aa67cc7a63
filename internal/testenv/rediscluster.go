package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisNodeTimeout is the cluster-node-timeout of the clusters and the
// down-after time of the sentinels the tests start: a primary that stops
// answering is failed over about this long after, plus an election.
const RedisNodeTimeout = time.Second

// RedisCluster is a Redis Cluster of three primaries with one replica
// each, on loopback ports, that a test started and that ends with it.
type RedisCluster struct {
	Nodes []*RedisServer
}

// RedisServer is one redis-server process a test started.
type RedisServer struct {
	Port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// Addr is the server's host:port.
func (s *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *RedisServer) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Client is a client of this server alone.
func (s *RedisServer) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2})
}

// StartRedisCluster starts six redis-server processes in cluster mode
// (cluster-node-timeout RedisNodeTimeout), joins them with
// `redis-cli --cluster create --cluster-replicas 1`, and waits until every
// node reports the cluster ok and every replica is in sync. It takes two
// to three seconds. The test fails, with what to install, when
// redis-server or redis-cli is missing; it is never skipped.
func StartRedisCluster(t testing.TB) *RedisCluster {
	t.Helper()
	needRedisTools(t)
	dir := t.TempDir()
	c := new(RedisCluster)
	for range 6 {
		port := freeClusterPort(t)
		c.Nodes = append(c.Nodes, startRedisServer(t, dir, port,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)),
			"--cluster-node-timeout", strconv.Itoa(int(RedisNodeTimeout.Milliseconds())),
			// A replica may take over however long it was cut off: the
			// tests fail primaries over on purpose.
			"--cluster-replica-validity-factor", "0"))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// URL is the cluster's URL in go-redis's cluster syntax: the first node,
// and the others as addr parameters.
func (c *RedisCluster) URL() string {
	var q []string
	for _, n := range c.Nodes[1:] {
		q = append(q, "addr="+n.Addr())
	}
	return "redis://" + c.Nodes[0].Addr() + "?" + strings.Join(q, "&")
}

// Node returns the running server at addr, or nil.
func (c *RedisCluster) Node(addr string) *RedisServer {
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// WaitHealthy waits until every running node says cluster_state:ok,
// knows three primaries that serve all slots, and every replica's link
// to its primary is up.
func (c *RedisCluster) WaitHealthy(ctx context.Context) error {
	var last error
	for {
		if last = c.healthy(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis cluster not healthy: %v", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *RedisCluster) healthy(ctx context.Context) error {
	for _, n := range c.Nodes {
		select {
		case <-n.done:
			continue // killed by the test
		default:
		}
		cl := n.Client()
		info, err := cl.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("%s: cluster state not ok", n.Addr())
		}
		var repl string
		if err == nil {
			repl, err = cl.Info(ctx, "replication").Result()
		}
		cl.Close()
		if err != nil {
			return err
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("%s: replica not in sync", n.Addr())
		}
	}
	return nil
}

// RedisSentinels is one Redis primary, one replica and three sentinels
// watching the primary under the name "main", on loopback ports.
type RedisSentinels struct {
	Primary, Replica *RedisServer
	Sentinels        []*RedisServer
}

// SentinelMaster is the name the sentinels know the primary by.
const SentinelMaster = "main"

// StartRedisSentinels starts a primary, its replica and three sentinels
// (down-after RedisNodeTimeout, quorum 2) and waits until the sentinels
// know the replica. Like StartRedisCluster, it fails when the tools are
// missing.
func StartRedisSentinels(t testing.TB) *RedisSentinels {
	t.Helper()
	needRedisTools(t)
	dir := t.TempDir()
	s := new(RedisSentinels)
	s.Primary = startRedisServer(t, dir, freeClusterPort(t))
	s.Replica = startRedisServer(t, dir, freeClusterPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(s.Primary.Port))
	for i := range 3 {
		port := freeClusterPort(t)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s 5000\n",
			port, SentinelMaster, s.Primary.Port, SentinelMaster, RedisNodeTimeout.Milliseconds(), SentinelMaster)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		s.Sentinels = append(s.Sentinels, startRedisProcess(t, dir, port, conf, "--sentinel"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, sn := range s.Sentinels {
		cl := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), Protocol: 2})
		for {
			replicas, err := cl.Replicas(ctx, SentinelMaster).Result()
			sentinels, err2 := cl.Sentinels(ctx, SentinelMaster).Result()
			if err == nil && err2 == nil && len(replicas) == 1 && len(sentinels) == 2 {
				break
			}
			select {
			case <-ctx.Done():
				cl.Close()
				t.Fatalf("sentinel %s does not know the replica and the other sentinels: %v %v", sn.Addr(), err, err2)
			case <-time.After(50 * time.Millisecond):
			}
		}
		cl.Close()
	}
	return s
}

// URL is the sentinels' URL in go-redis's failover syntax.
func (s *RedisSentinels) URL() string {
	u := "redis://" + s.Sentinels[0].Addr() + "/0?master_name=" + SentinelMaster
	for _, n := range s.Sentinels[1:] {
		u += "&addr=" + n.Addr()
	}
	return u
}

func needRedisTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; the Redis Cluster and Sentinel suites start their own servers with it. "+
				"Install it (Debian: sudo apt-get install redis-server), or run `make test`, which does: %v", tool, err)
		}
	}
}

// freeClusterPort returns a loopback port that was free a moment ago,
// with the port 10000 above it (the cluster bus) free too.
func freeClusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if port+10000 > 65535 {
			ln.Close()
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		ln.Close()
		if err != nil {
			continue
		}
		bus.Close()
		return port
	}
	t.Fatal("no free pair of loopback ports for a Redis Cluster node")
	return 0
}

func startRedisServer(t testing.TB, dir string, port int, args ...string) *RedisServer {
	return startRedisProcess(t, dir, port, "", args...)
}

// startRedisProcess starts redis-server (with conf first when given) on
// port, persisting nothing, and waits until it answers PING. It is killed
// when t ends, and with the test process (KillWithParent).
func startRedisProcess(t testing.TB, dir string, port int, conf string, args ...string) *RedisServer {
	t.Helper()
	var all []string
	if conf != "" {
		all = append(all, conf)
	}
	// A replica's first sync starts at once, not after the default 5s
	// wait for other replicas to share it.
	all = append(all, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--repl-diskless-sync-delay", "0",
		"--dir", dir, "--logfile", filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)))
	all = append(all, args...)
	cmd := exec.Command("redis-server", all...)
	cmd.SysProcAttr = KillWithParent()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server on port %d: %v", port, err)
	}
	s := &RedisServer{Port: port, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.Kill)
	cl := s.Client()
	defer cl.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := cl.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)))
			t.Fatalf("redis-server on port %d exited:\n%s", port, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d does not answer: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
