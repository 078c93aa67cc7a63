package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// graphvizWorkers lists the processes the gateway started to lay out
// diagrams: its children with SWITCHYARD_GRAPHVIZ_WORKER in their
// environment. It reads /proc, so it runs on Linux only.
func graphvizWorkers(t *testing.T, g *gateway) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		t.Skipf("no /proc to find the gateway's children in: %v", err)
	}
	parent := g.cmd.Process.Pid
	var pids []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone since the glob
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid != parent {
			continue
		}
		dir := filepath.Dir(path)
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !strings.Contains(string(env), "SWITCHYARD_GRAPHVIZ_WORKER=1") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		pids = append(pids, pid)
	}
	return pids
}

// diagramCall is a create_diagram call of source.
func diagramCall(t *testing.T, source string) demobackend.ToolCall {
	t.Helper()
	args, err := json.Marshal(map[string]string{"title": "Graph", "source": source, "language": "dot"})
	if err != nil {
		t.Fatal(err)
	}
	return demobackend.ToolCall{Name: "create_diagram", Arguments: string(args)}
}

// slowDiagram is a graph within every bound whose layout takes about a
// second: 500 nodes in 10 rows, 1,000 edges between neighbouring rows.
func slowDiagram() string {
	var b strings.Builder
	b.WriteString("digraph {")
	seed := uint32(1)
	next := func() int {
		seed = seed*1664525 + 1013904223
		return int(seed>>8) % 50
	}
	for r := range 9 {
		for range 111 {
			fmt.Fprintf(&b, " n%d_%d -> n%d_%d;", r, next(), r+1, next())
		}
	}
	b.WriteString(" }")
	return b.String()
}

// cpuTicks is the CPU time process pid has used, in clock ticks (utime
// and stime of /proc/pid/stat); -1 once it is gone.
func cpuTicks(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return -1
	}
	user, _ := strconv.Atoi(f[11])
	sys, _ := strconv.Atoi(f[12])
	return user + sys
}

// TestDiagramLayoutEndsWithTheClient draws a diagram through the real
// binary, whose layout runs in a worker process, then starts a large one
// and leaves while the worker lays it out: the worker is gone within a
// second, so no CPU is spent on a diagram nobody will see, and the next
// diagram gets a new worker.
func TestDiagramLayoutEndsWithTheClient(t *testing.T) {
	up, _, key, g := fundedGateway(t, "drawer")
	body := `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Draw it"}]}`

	up.Enqueue(testupstream.ToolCalls(diagramCall(t, "digraph { a -> b -> c }")), testupstream.Text("Here it is."))
	status, stream := v3Stream(t, g, key, body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, stream)
	}
	arts := deltaKey(t, stream, "artifact")
	if len(arts) != 1 || arts[0]["type"] != "diagram" || arts[0]["image_base64"] == "" {
		t.Fatalf("artifacts %v, want one diagram with its image:\n%s", arts, stream)
	}
	workers := graphvizWorkers(t, g)
	if len(workers) != 1 {
		t.Fatalf("%d graphviz workers after a diagram, want 1", len(workers))
	}

	// No second round: the client is gone before it.
	up.Enqueue(testupstream.ToolCalls(diagramCall(t, slowDiagram())))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := newRequest(t, g, "POST", "/v3/chat/completions", key, body).WithContext(ctx)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	started := false
	for !started && sc.Scan() {
		started = strings.Contains(sc.Text(), `"op":"start","kind":"tool"`)
	}
	if !started {
		t.Fatal("the stream ended before the diagram's tool call started")
	}
	// The client leaves once the worker is busy with the layout.
	busy := cpuTicks(workers[0]) + 10
	for wait := time.Now().Add(10 * time.Second); cpuTicks(workers[0]) < busy; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatal("the worker did not start on the large diagram")
		}
	}
	cancel()
	resp.Body.Close()

	deadline := time.Now().Add(time.Second)
	for {
		left := graphvizWorkers(t, g)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("graphviz workers %v still running a second after the client left (the first was %d)", left, workers[0])
		}
		time.Sleep(20 * time.Millisecond)
	}

	up.Enqueue(testupstream.ToolCalls(diagramCall(t, "digraph { x -> y }")), testupstream.Text("Again."))
	status, stream = v3Stream(t, g, key, body)
	if arts := deltaKey(t, stream, "artifact"); status != 200 || len(arts) != 1 || arts[0]["type"] != "diagram" {
		t.Fatalf("the next diagram: status %d, artifacts %v:\n%s", status, arts, stream)
	}
}
