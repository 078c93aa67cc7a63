// Command bench measures what the gateway adds to a request: it runs the
// same load against the demo backend directly (the baseline), through a
// plain Caddy reverse_proxy, and through the gateway on its embedded
// defaults (authentication, limits, per-token charging on SQLite), in one
// run on one machine, and prints them side by side. Limits are raised so
// that every request does the full work.
//
//	go run ./bench [-bin bin/switchyard] [-n 3000] [-c 16]
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/switchyard", "switchyard binary")
	n := flag.Int("n", 3000, "requests per scenario and target")
	c := flag.Int("c", 16, "concurrent clients")
	flag.Parse()
	if err := run(*bin, *n, *c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type scenario struct {
	name string
	path string
	body string
}

var scenarios = []scenario{
	{"models", "/v1/models", ""},
	{"chat json", "/v1/chat/completions", `{"model":"svc-3","messages":[{"role":"user","content":"Benchmark me"}]}`},
	{"chat stream", "/v1/chat/completions", `{"model":"svc-3","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Benchmark me"}]}`},
}

func run(bin string, n, c int) error {
	tmp, err := os.MkdirTemp("", "switchyard-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	upAddr, gwAddr, adminAddr := freeAddr(), freeAddr(), freeAddr()
	plainAddr, plainAdmin := freeAddr(), freeAddr()
	env := append(os.Environ(),
		"SWITCHYARD_DATA_DIR="+filepath.Join(tmp, "data"),
		"SWITCHYARD_UPSTREAM=http://"+upAddr+"/v1",
		"SWITCHYARD_LISTEN="+gwAddr,
		"SWITCHYARD_ADMIN="+adminAddr,
	)
	stopUp, err := start(bin, env, "demo-backend", "--listen", upAddr)
	if err != nil {
		return err
	}
	defer stopUp()
	keyOut, err := commandEnv(env, bin, "keys", "create", "--account", "bench")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(keyOut), "\n")
	key := lines[len(lines)-1]
	if _, err := commandEnv(env, bin, "accounts", "topup", "--account", "bench", "--usd", "1000"); err != nil {
		return err
	}
	// The shipped config with limits raised out of the way: the bench
	// measures the work per request, not the refusals.
	example, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		return err
	}
	gwCfg := filepath.Join(tmp, "Caddyfile")
	raised := strings.Replace(string(example), "\tswitchyard {",
		"\tswitchyard {\n\t\tlimits {\n\t\t\trequests 10000000 1m\n\t\t\tstreams 10000\n\t\t}", 1)
	if err := os.WriteFile(gwCfg, []byte(raised), 0o600); err != nil {
		return err
	}
	stopGw, err := start(bin, env, "run", "--config", gwCfg, "--adapter", "caddyfile")
	if err != nil {
		return err
	}
	defer stopGw()
	// Plain Caddy reverse_proxy to the same backend: what any Caddy-based
	// proxy costs, so that the last row shows Switchyard's own share.
	plainCfg := filepath.Join(tmp, "Caddyfile.plain")
	if err := os.WriteFile(plainCfg, []byte(fmt.Sprintf(
		"{\n\tadmin %s\n}\nhttp://%s {\n\tbind %s\n\treverse_proxy %s {\n\t\tflush_interval -1\n\t}\n}\n",
		plainAdmin, plainAddr, strings.Split(plainAddr, ":")[0], upAddr)), 0o600); err != nil {
		return err
	}
	stopPlain, err := start(bin, env, "run", "--config", plainCfg, "--adapter", "caddyfile")
	if err != nil {
		return err
	}
	defer stopPlain()
	if err := waitFor(plainAddr); err != nil {
		return err
	}
	if err := waitFor(gwAddr); err != nil {
		return err
	}
	if err := waitFor(upAddr); err != nil {
		return err
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}}
	fmt.Printf("%d requests per row, %d concurrent clients, demo backend without delays\n\n", n, c)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\ttarget\treq/s\tp50\tp99\tp50 added\terrors\t")
	for _, s := range scenarios {
		base, err := load(client, "http://"+upAddr, "", s, n, c)
		if err != nil {
			return err
		}
		plain, err := load(client, "http://"+plainAddr, "", s, n, c)
		if err != nil {
			return err
		}
		gw, err := load(client, "http://"+gwAddr, key, s, n, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\tdirect (baseline)\t%.0f\t%s\t%s\t\t%d\t\n", s.name, base.rps, ms(base.p50), ms(base.p99), base.errors)
		fmt.Fprintf(tw, "%s\tcaddy reverse_proxy\t%.0f\t%s\t%s\t%s\t%d\t\n", s.name, plain.rps, ms(plain.p50), ms(plain.p99), ms(plain.p50-base.p50), plain.errors)
		fmt.Fprintf(tw, "%s\tswitchyard\t%.0f\t%s\t%s\t%s\t%d\t\n", s.name, gw.rps, ms(gw.p50), ms(gw.p99), ms(gw.p50-base.p50), gw.errors)
	}
	return tw.Flush()
}

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
}

// load sends n requests from c clients and measures each to its last byte.
func load(client *http.Client, base, key string, s scenario, n, c int) (result, error) {
	var (
		next    atomic.Int64
		errs    atomic.Int64
		mu      sync.Mutex
		samples = make([]time.Duration, 0, n)
		wg      sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				t0 := time.Now()
				if err := once(ctx, client, base, key, s); err != nil {
					errs.Add(1)
					continue
				}
				d := time.Since(t0)
				mu.Lock()
				samples = append(samples, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	if len(samples) == 0 {
		return result{}, fmt.Errorf("%s against %s: every request failed", s.name, base)
	}
	slices.Sort(samples)
	return result{
		rps:    float64(len(samples)) / elapsed.Seconds(),
		p50:    samples[len(samples)/2],
		p99:    samples[len(samples)*99/100],
		errors: errs.Load(),
	}, nil
}

func once(ctx context.Context, client *http.Client, base, key string, s scenario) error {
	method, body := "GET", io.Reader(nil)
	if s.body != "" {
		method, body = "POST", strings.NewReader(s.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+s.path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitFor(addr string) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("%s did not start listening", addr)
}

// start runs a long-lived subcommand and returns a function that stops it.
func start(bin string, env []string, args ...string) (func(), error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}, nil
}

func commandEnv(env []string, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", fmt.Errorf("%v: %s", args, firstLine(stderr.String()))
	}
	return string(out), err
}

func firstLine(s string) string {
	line, _, _ := bufio.NewReader(strings.NewReader(s)).ReadLine()
	return string(line)
}
