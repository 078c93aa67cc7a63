package diagram

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// layered is a graph of ranks rows of perRank nodes with edges between
// neighbouring rows, picked by a fixed pseudo-random sequence: no edge
// skips a rank, so the complexity estimate lets it through, yet its
// crossings keep dot's crossing minimisation busy. attrs go first.
func layered(ranks, perRank, edges int, attrs string) string {
	var b strings.Builder
	b.WriteString("digraph { " + attrs)
	seed := uint32(1)
	next := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>8) % n
	}
	for r := 0; r < ranks-1; r++ {
		for range edges / (ranks - 1) {
			fmt.Fprintf(&b, " n%d_%d -> n%d_%d;", r, next(perRank), r+1, next(perRank))
		}
	}
	b.WriteString(" }")
	return b.String()
}

// slotFreeWithin reports whether the layout slot is free, or becomes
// free within d.
func slotFreeWithin(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		select {
		case slot <- struct{}{}:
			<-slot
			return true
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOrthoGraphDoesNotHoldTheEngine draws 1,000 nodes and 2,000 edges
// with splines=ortho, a diagram whose layout once burned
// about 65 s of CPU in the one layout slot every tenant shares, long
// after the tool call and its client had given up. The call must end
// within a second of its context, and the slot be free right after.
func TestOrthoGraphDoesNotHoldTheEngine(t *testing.T) {
	src := layered(10, 100, 2000, "splines=ortho;")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Render(ctx, Diagram{Source: src})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Render returned after %v, its context ended after 2s", d)
	}
	if err == nil {
		t.Error("the graph rendered; want a refusal or the context's error")
	}
	if !slotFreeWithin(time.Second) {
		t.Fatal("the layout slot is still taken a second after the call ended")
	}
	small, cancelSmall := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelSmall()
	if _, err := Render(small, Diagram{Source: "digraph { a -> b }"}); err != nil {
		t.Errorf("the next diagram: %v", err)
	}
}

// slowGraph is within every bound and takes dot about a second, more on
// a busy machine.
func slowGraph() string { return layered(10, 50, MaxEdges, "") }

// warmWorker renders a small diagram, so that a worker is running, and
// returns its process id.
func warmWorker(t *testing.T) int {
	t.Helper()
	return warmWorkerProc(t).cmd.Process.Pid
}

// warmWorkerProc is warmWorker's worker itself.
func warmWorkerProc(t *testing.T) *worker {
	t.Helper()
	if _, err := Render(context.Background(), Diagram{Source: "digraph { a -> b }"}); err != nil {
		t.Fatal(err)
	}
	select {
	case slot <- struct{}{}:
	case <-time.After(5 * time.Second):
		t.Fatal("the slot stays taken")
	}
	defer func() { <-slot }()
	if current == nil {
		t.Fatal("no worker after a layout")
	}
	return current
}

// killedMidLayout reports whether w was stopped with SIGKILL before it
// answered its job: a worker that finished its layout answers, stays
// current and is not stopped. Unlike a bound on the wall time, which a
// loaded machine stretches for the stop as much as for the layout, it
// tells a call that stopped the layout from one that waited for it.
func killedMidLayout(w *worker) bool {
	if w.cmd.ProcessState == nil {
		return false
	}
	ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// gone reports whether the process pid has exited and been reaped.
func gone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return p.Signal(syscall.Signal(0)) != nil
}

// TestLayoutStopsWithItsContext lays out a graph within every bound
// whose layout takes about a second, with a context that ends after a
// fifth of that, as when the tool times out or the client leaves: the
// call returns with the context's error without waiting for the layout
// (the worker was killed in the middle of it), the slot is free when it
// returns, and the process that ran the layout is gone, so its CPU is
// too.
func TestLayoutStopsWithItsContext(t *testing.T) {
	w := warmWorkerProc(t)
	pid := w.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Render(ctx, Diagram{Source: slowGraph()})
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
	if !killedMidLayout(w) {
		t.Errorf("Render returned after %v, its context ended after 200ms: the layout was not stopped (worker %v)",
			elapsed, w.cmd.ProcessState)
	}
	if !slotFreeWithin(0) {
		t.Error("the slot is still taken after Render returned")
	}
	if !gone(pid) {
		t.Errorf("the worker %d that ran the layout is still running", pid)
	}
	if _, err := Render(context.Background(), Diagram{Source: "digraph { a -> b }"}); err != nil {
		t.Errorf("the next diagram: %v", err)
	}
}

// TestLayoutTimeIsBounded shortens MaxLayoutTime and lays out the slow
// graph: it is refused with a message for the model, the worker that ran
// it is stopped in the middle of the layout, and the next diagram
// renders.
func TestLayoutTimeIsBounded(t *testing.T) {
	w := warmWorkerProc(t)
	pid := w.cmd.Process.Pid
	layoutLimit = 200 * time.Millisecond
	t.Cleanup(func() { layoutLimit = MaxLayoutTime })
	start := time.Now()
	_, err := Render(context.Background(), Diagram{Source: slowGraph()})
	rendertest.SourceError(t, err, "took more than 200ms to lay out")
	if !killedMidLayout(w) {
		t.Errorf("refused after %v, the bound is 200ms: the layout was not stopped (worker %v)", time.Since(start), w.cmd.ProcessState)
	}
	if !gone(pid) {
		t.Errorf("the worker %d that ran the layout is still running", pid)
	}
	layoutLimit = MaxLayoutTime
	if _, err := Render(context.Background(), Diagram{Source: "digraph { a -> b }"}); err != nil {
		t.Errorf("the next diagram: %v", err)
	}
}

// TestWorkerDeathIsAFailure kills the worker behind the renderer's back:
// the next call fails as an internal error (not one the model could fix),
// and the one after it gets a new worker.
func TestWorkerDeathIsAFailure(t *testing.T) {
	pid := warmWorker(t)
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	_, err = Render(context.Background(), Diagram{Source: "digraph { x -> y }"})
	var se *render.SourceError
	if err == nil || errors.As(err, &se) {
		t.Fatalf("error %v (%T) from a dead worker, want an internal error", err, err)
	}
	if _, err := Render(context.Background(), Diagram{Source: "digraph { x -> y }"}); err != nil {
		t.Errorf("after a new worker: %v", err)
	}
}

// TestWorkerEnvironment checks that the worker gets none of the
// gateway's secrets, only what the runtime reads.
func TestWorkerEnvironment(t *testing.T) {
	t.Setenv("SWITCHYARD_KEY_SECRET", "do-not-pass")
	t.Setenv("SWITCHYARD_UPSTREAM_API_KEY", "do-not-pass")
	t.Setenv("TMPDIR", os.TempDir())
	env := strings.Join(workerEnviron(), "\n")
	if strings.Contains(env, "do-not-pass") {
		t.Errorf("the worker's environment carries a secret:\n%s", env)
	}
	for _, want := range []string{workerEnv + "=1", "GOMAXPROCS=1", "TMPDIR="} {
		if !strings.Contains(env, want) {
			t.Errorf("the worker's environment lacks %s:\n%s", want, env)
		}
	}
}
