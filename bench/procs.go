package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/policy/limits"
)

// target is one thing the load is sent to.
type target struct {
	name     string
	base     string // http://host:port
	key      string // API key; empty for the baseline targets
	admin    string // admin endpoint (pprof, metrics); empty for direct
	baseline bool   // direct or plain Caddy: sent the /v1 equivalent of /v3
	proc     *proc
	client   *http.Client
}

// cpuTime is the user and system time t's process has used: the
// proxy's, or for direct the demo backend's.
func (t *target) cpuTime() (time.Duration, error) {
	if t.proc == nil {
		return 0, errors.New("no process")
	}
	return cpuTime(t.proc.pid())
}

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}}
}

// pinning places processes on CPUs with taskset: the process under test
// alone on one CPU, the load generator with the backend (and the private
// Redis) on the other, so that the proxy's cost is not hidden by, or
// charged with, the load's. On a machine with one CPU, or without
// taskset, nothing is pinned.
type pinning struct {
	on         bool
	proxy, aux string // CPU lists for taskset -c
}

func choosePinning(disabled bool) pinning {
	if disabled || numCPU() < 2 {
		return pinning{}
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return pinning{}
	}
	return pinning{on: true, proxy: "1", aux: "0"}
}

func (p pinning) describe() string {
	if !p.on {
		return "no CPU pinning (taskset missing, one CPU, or -nopin)"
	}
	return fmt.Sprintf("proxies under test (plain Caddy and Switchyard) pinned to CPU %s with `taskset -c %s`; "+
		"the load generator (this program, all threads, `taskset -a -p -c %s`), the demo backend and the private Redis pinned to CPU %s; "+
		"PostgreSQL is the machine's shared server and is not pinned", p.proxy, p.proxy, p.aux, p.aux)
}

// pinSelf moves every thread of this process to the aux CPU; threads
// started later inherit it.
func (p pinning) pinSelf() error {
	if !p.on {
		return nil
	}
	out, err := exec.Command("taskset", "-a", "-p", "-c", p.aux, strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset: %v: %s", err, out)
	}
	return nil
}

func (p pinning) command(cpus string, bin string, args ...string) *exec.Cmd {
	if !p.on {
		return exec.Command(bin, args...)
	}
	return exec.Command("taskset", append([]string{"-c", cpus, bin}, args...)...)
}

func numCPU() int {
	b, err := os.ReadFile("/sys/fs/cgroup/cpuset.cpus.effective")
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		b, err = exec.Command("nproc").Output()
		if err != nil {
			return 1
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		z := a
		if ok {
			z, _ = strconv.Atoi(hi)
		}
		n += z - a + 1
	}
	return n
}

// proc is a long-lived child process.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  bytes.Buffer
}

func startProc(name string, cmd *exec.Cmd, env []string) (*proc, error) {
	p := &proc{name: name, cmd: cmd}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &p.log, &p.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", name, err)
	}
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// tail is the end of the process's output, for errors.
func (p *proc) tail() string {
	s := p.log.String()
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

// rssKiB reads the resident set of pid. Under taskset the pid is
// taskset's, which execs the program, so it is the program's.
func rssKiB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitFor(addr string, p *proc) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		if p != nil && p.cmd.ProcessState != nil {
			break
		}
	}
	if p != nil {
		return fmt.Errorf("%s did not start listening on %s:\n%s", p.name, addr, p.tail())
	}
	return fmt.Errorf("%s did not start listening", addr)
}

func run(env []string, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %v: %v: %s", bin, args, err, lastLine(stderr.String()))
	}
	return string(out), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// privateRedis starts a Redis of the bench's own, without persistence, so
// that its command counts are the gateway's alone.
func privateRedis(pin pinning, dir string) (*proc, string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", errors.New("redis-server not found: run scripts/services.sh, or -modes embedded")
	}
	addr := freeAddr()
	_, port, _ := net.SplitHostPort(addr)
	p, err := startProc("redis", pin.command(pin.aux, bin, "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir), os.Environ())
	if err != nil {
		return nil, "", err
	}
	if err := waitFor(addr, p); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, addr, nil
}

// redisCalls is what Redis at addr has run, by command, but for the
// commands the bench sends itself (benchCommands).
func redisCalls(addr string) (map[string]limits.CommandStat, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "INFO commandstats\r\n"); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return nil, fmt.Errorf("INFO: %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	out := limits.ParseCommandStats(string(body))
	for name := range out {
		if cmd, _, _ := strings.Cut(name, "|"); benchCommands[cmd] {
			delete(out, name)
		}
	}
	return out, nil
}

// redisPing is the round trip of a bare PING to Redis at addr from the
// proxies' CPU, over one connection, as redis-benchmark measures it: the
// least a request that waits for Redis can wait.
type redisPing struct {
	p50, p99 float64 // µs
}

func measureRedisPing(pin pinning, addr string) (redisPing, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return redisPing{}, errors.New("redis-benchmark not found")
	}
	host, port, _ := net.SplitHostPort(addr)
	out, err := pin.command(pin.proxy, bin, "-h", host, "-p", port, "-c", "1", "-n", "20000", "-t", "ping", "--csv").Output()
	if err != nil {
		return redisPing{}, fmt.Errorf("redis-benchmark: %v", err)
	}
	// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.ReplaceAll(line, `"`, ""), ",")
		if len(f) < 7 || f[0] != "PING_MBULK" {
			continue
		}
		p50, err1 := strconv.ParseFloat(f[4], 64)
		p99, err2 := strconv.ParseFloat(f[6], 64)
		if err1 != nil || err2 != nil {
			break
		}
		return redisPing{p50: p50 * 1000, p99: p99 * 1000}, nil
	}
	return redisPing{}, fmt.Errorf("redis-benchmark: no PING_MBULK row in %q", out)
}

// pgDatabase creates a database of the bench's own on the server of url,
// so that pg_stat_database counts the gateway's statements alone, and
// returns its URL and a function that drops it.
func pgDatabase(url string) (string, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at %s: %v (run scripts/services.sh, or -modes embedded)", url, err)
	}
	name := "switchyard_bench_" + randomHex(4)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	cfg := conn.Config()
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		conn.Close(ctx)
	}
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	return u, drop, nil
}

// pgCounts is what pg_stat_database says of one database.
type pgCounts struct{ xacts, written int64 }

// pgStats reads the counters of the database of url. The server gathers
// them from each connection when it goes idle, at the latest 10 s later
// (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): the caller waits that out.
func pgStats(url string) (pgCounts, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return pgCounts{}, err
	}
	defer conn.Close(ctx)
	var c pgCounts
	// This connection's own transaction is not in the numbers it reads,
	// and it flushes its stats only on closing, after the read.
	err = conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&c.xacts, &c.written)
	return c, err
}

// scrape reads the counters named prefix* from a Caddy admin /metrics.
func scrape(admin, prefix string) (map[string]float64, error) {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := make(map[string]float64)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// fetchProfile saves a profile from a Caddy admin endpoint's /debug/pprof.
func fetchProfile(admin, path, file string) error {
	client := &http.Client{Timeout: 2 * time.Minute}
	resp, err := client.Get("http://" + admin + "/debug/pprof/" + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: status %d", path, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
