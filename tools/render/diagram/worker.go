package diagram

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/tools/render"
)

// Graphviz runs in a worker process: this same program, started again
// with workerEnv set, which lays graphs out one at a time for the
// process that started it. Graphviz cannot be interrupted where it runs
// (go-graphviz compiles its WebAssembly module without the checks that
// let wazero stop a call when its context ends, and the module, made once
// when the program starts, could not be made again), so a layout is
// stopped by killing the worker: the CPU it burns ends at once, whatever
// Graphviz was doing, and so does any damage a hostile graph did to its
// memory. The next layout starts a new worker.
const workerEnv = "SWITCHYARD_GRAPHVIZ_WORKER"

// workerGrace is how long past a job's limit a worker waits for its
// parent to stop it before it exits on its own: a parent that died
// cannot.
const workerGrace = 5 * time.Second

func init() {
	if os.Getenv(workerEnv) != "1" {
		return
	}
	// This process is a worker: it serves layouts on its standard input
	// and output until its parent closes them, and never runs the
	// program's main.
	os.Exit(serveWorker(os.Stdin, os.Stdout))
}

// layoutJob is one layout asked of a worker.
type layoutJob struct {
	// Source is the DOT source with the theme's defaults in place.
	Source string
	// Rankdir applies unless Source sets its own.
	Rankdir string
	// Check asks for the complexity checks (a second layout of the same
	// source skips them).
	Check bool
	// Aspect, when set, lets the worker lay the graph out in the
	// aspect's second direction instead of Rankdir when its estimated
	// shape is plainly a strip (see clearStrip).
	Aspect string
	// ClusterFill and ClusterInner are the theme's cluster fills.
	ClusterFill, ClusterInner string
	// Limit is how long the parent lets the job run.
	Limit time.Duration
}

// layoutResult is a worker's answer: Graphviz's json output, or why not.
type layoutResult struct {
	JSON []byte
	// Chosen reports whether a direction was chosen (the source set
	// none), and Rankdir which one was laid out.
	Chosen  bool
	Rankdir string
	// Estimate is, when Rankdir is the aspect's second direction, the
	// estimated width-to-height ratio of the first.
	Estimate float64
	// Problem is a problem with the source, for its author
	// (render.SourceError's message).
	Problem string
	// Failure is an internal failure; the worker should not be trusted
	// with another job.
	Failure string
}

// serveWorker runs jobs read from in and writes their results to out
// until in ends. It returns the process's exit code.
func serveWorker(in io.Reader, out io.Writer) int {
	dec := gob.NewDecoder(bufio.NewReader(in))
	w := bufio.NewWriter(out)
	enc := gob.NewEncoder(w)
	for {
		var job layoutJob
		if err := dec.Decode(&job); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "graphviz worker: reading a job: %v\n", err)
			return 1
		}
		watchdog := time.AfterFunc(job.Limit+workerGrace, func() {
			fmt.Fprintln(os.Stderr, "graphviz worker: the job ran past its limit and nobody stopped it")
			os.Exit(3)
		})
		res := runJob(job)
		watchdog.Stop()
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(os.Stderr, "graphviz worker: writing a result: %v\n", err)
			return 1
		}
		if err := w.Flush(); err != nil {
			return 1
		}
	}
}

// runJob lays one job out, turning a panic of the bindings into a
// failure: the worker is replaced after one anyway.
func runJob(job layoutJob) (res layoutResult) {
	defer func() {
		if r := recover(); r != nil {
			res = layoutResult{Failure: fmt.Sprintf("panic: %v", r)}
		}
	}()
	t := &theme{clusterFill: job.ClusterFill, clusterInner: job.ClusterInner}
	res, err := layoutSource(job, t)
	var se *render.SourceError
	switch {
	case errors.As(err, &se):
		// Rankdir tells the caller the direction that failed.
		return layoutResult{Problem: se.Message, Rankdir: res.Rankdir}
	case err != nil:
		return layoutResult{Failure: err.Error()}
	}
	return res
}

// workerExchangeGoroutine names the goroutine that talks to a worker in
// switchyard_panics_recovered_total.
var workerExchangeGoroutine = guard.Name("graphviz_worker_exchange")

// worker is a running worker process, seen from its parent. It is used
// by the holder of the slot only.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr *tail
	done   bool // stopped
}

// startWorker starts a worker process.
func startWorker() (*worker, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("starting the graphviz worker: %w", err)
	}
	cmd := exec.Command(exe)
	// What ps shows: the worker is this program, for another purpose.
	cmd.Args = []string{"graphviz-worker"}
	cmd.Env = workerEnviron()
	w := &worker{cmd: cmd, stderr: &tail{max: 4 << 10}}
	cmd.Stderr = w.stderr
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("starting the graphviz worker: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the graphviz worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the graphviz worker: %w", err)
	}
	w.enc = gob.NewEncoder(w.stdin)
	w.dec = gob.NewDecoder(bufio.NewReader(stdout))
	return w, nil
}

// executable is the program to start as a worker: the running one. On
// Linux that is /proc/self/exe, which names the running image even after
// an upgrade replaced the file it was started from: a worker of another
// version would not speak the same protocol.
func executable() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err == nil {
		return self, nil
	}
	return os.Executable()
}

// workerEnviron is the worker's environment: what the Go runtime and
// go-graphviz's cache of compiled code read, and nothing else, so that
// the gateway's secrets stay in the gateway. One processor is all a
// layout uses.
func workerEnviron() []string {
	env := []string{workerEnv + "=1", "GOMAXPROCS=1"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "HOME", "TMPDIR", "GODEBUG", "GOTRACEBACK", "GOMEMLIMIT", "GOGC":
			env = append(env, kv)
		}
	}
	return env
}

// run sends job and waits for its result. It returns errStopped, without
// waiting, when stop is closed first; the caller must then stop the
// worker, which ends the exchange.
func (w *worker) run(job layoutJob, stop <-chan struct{}) (layoutResult, error) {
	type reply struct {
		res layoutResult
		err error
	}
	done := make(chan reply, 1)
	go func() {
		// Nothing here should panic; if the decoder ever does, the
		// caller learns of a broken worker instead of the process
		// ending.
		defer func() {
			if r := recover(); r != nil {
				done <- reply{err: fmt.Errorf("graphviz worker: %w", guard.Recovered(workerExchangeGoroutine, r))}
			}
		}()
		if err := w.enc.Encode(job); err != nil {
			done <- reply{err: w.broken("sending a job", err)}
			return
		}
		var res layoutResult
		if err := w.dec.Decode(&res); err != nil {
			done <- reply{err: w.broken("reading a result", err)}
			return
		}
		done <- reply{res: res}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-stop:
		return layoutResult{}, errStopped
	}
}

// errStopped is run's error when the caller stopped waiting.
var errStopped = errors.New("graphviz worker stopped")

// broken describes a worker that failed to answer, with what it wrote
// to its standard error.
func (w *worker) broken(what string, err error) error {
	if msg := strings.TrimSpace(w.stderr.String()); msg != "" {
		return fmt.Errorf("graphviz worker: %s: %w (stderr: %s)", what, err, msg)
	}
	return fmt.Errorf("graphviz worker: %s: %w", what, err)
}

// stop kills the worker and waits until it is gone. Killing rather than
// asking is the point: a worker in the middle of a layout reads nothing.
func (w *worker) stop() {
	if w.done {
		return
	}
	w.done = true
	_ = w.cmd.Process.Kill()
	_ = w.stdin.Close()
	_ = w.cmd.Wait()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
