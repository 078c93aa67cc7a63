package diagram

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
)

// longFlowchart is laid out left to right a strip of about 20:1.
const longFlowchart = `digraph {
	start -> intake -> triage -> review -> approve -> schedule -> build -> test -> release -> monitor -> report -> close -> archive
	review -> rework -> review
	test -> fix -> test
}`

// onboarding is the diagram of the create_document benchmark
// (tools/artifacts): labelled edges, decisions, a loop.
const onboarding = `digraph onboarding {
  start [label="Contract signed", shape=oval]; kickoff [label="Kick-off call"]; sso [label="SSO configured?", shape=diamond];
  idp [label="Connect identity provider"]; invite [label="Invite admins"]; import [label="Import data"];
  valid [label="Data valid?", shape=diamond]; fix [label="Fix mapping"]; train [label="Train users"];
  pilot [label="Pilot with one team"]; review [label="Pilot review"]; rollout [label="Company-wide rollout"];
  done [label="Handover to support", shape=oval];
  start -> kickoff -> sso; sso -> idp [label="no"]; sso -> invite [label="yes"]; idp -> invite;
  invite -> import -> valid; valid -> fix [label="no"]; fix -> import [style=dashed];
  valid -> train [label="yes"]; train -> pilot -> review -> rollout -> done;
}`

// layoutsFor renders d and returns the PNG and the number of layouts it
// took.
func layoutsFor(t *testing.T, d Diagram, withShortcut bool) ([]byte, int64) {
	t.Helper()
	saved := shortcut
	shortcut = withShortcut
	defer func() { shortcut = saved }()
	before := layoutsStarted.Load()
	out, err := Render(context.Background(), d)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out, layoutsStarted.Load() - before
}

// A graph plainly a strip in the aspect's first direction is laid out
// once, in the other; one near the accepted range is laid out in both,
// as without the estimate.
func TestLayoutsPerDiagram(t *testing.T) {
	for _, c := range []struct {
		name, src, aspect string
		want              int64
	}{
		// Left to right about 20:1, estimated 26:1; top to bottom
		// 0.37:1 beats even a 13:1 strip.
		{"onboarding", onboarding, render.AspectLandscape, 1},
		// Steps with long names, left to right a strip of about 90:1.
		{"named steps", steps(12), render.AspectLandscape, 1},
		// Thirty leaves of one root, top to bottom a strip of about
		// 24:1 where portrait was asked for.
		{"fan", fan(30), render.AspectPortrait, 1},
		// Top to bottom a strip of 1:27, left to right one of 67:1, no
		// better: both layouts, the first kept.
		{"long chain", row(24), render.AspectPortrait, 2},
		// Left to right 9:1, estimated 15:1; top to bottom 0.31:1
		// beats the layout of 9:1 but not every one the estimate
		// allows (down to 7.6:1): both layouts.
		{"long flowchart", longFlowchart, render.AspectLandscape, 2},
		// Left to right, about 9:1 but not much longer than a page's
		// text width: too close to call.
		{"short chain", `digraph { a -> b -> c -> d -> e }`, render.AspectLandscape, 2},
		// In range in the first direction: one layout, as always.
		{"fork", `digraph { a -> b; a -> c }`, render.AspectLandscape, 1},
		// The source's own direction: one layout, no estimate.
		{"rankdir", `digraph { rankdir=LR; ` + strings.TrimPrefix(longFlowchart, "digraph {"), render.AspectLandscape, 1},
		// Clusters are not estimated: both layouts.
		{"clustered", `digraph { subgraph cluster_a { ` + strings.TrimPrefix(longFlowchart, "digraph {") + ` }`, render.AspectLandscape, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, n := layoutsFor(t, Diagram{Source: c.src, Aspect: c.aspect}, true)
			if n != c.want {
				t.Errorf("%d layouts, want %d", n, c.want)
			}
		})
	}
}

// row is a graph of n nodes in a row.
func row(n int) string {
	var b strings.Builder
	b.WriteString("digraph { ")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "step%d -> step%d; ", i-1, i)
	}
	return b.String() + "}"
}

// steps is a row of n nodes with long names.
func steps(n int) string {
	var b strings.Builder
	b.WriteString("digraph { ")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "\"Step number %d of the process\" -> \"Step number %d of the process\"; ", i-1, i)
	}
	return b.String() + "}"
}

// fan is a root with n leaves.
func fan(n int) string {
	var b strings.Builder
	b.WriteString("digraph { ")
	for i := range n {
		fmt.Fprintf(&b, "root -> leaf%d; ", i)
	}
	return b.String() + "}"
}

// directionSources are the graphs the estimate must not change the
// outcome of: the samples and the corpus's, this file's, and chains,
// trees and wide fans of several sizes, in every aspect.
func directionSources(t *testing.T) map[string]string {
	srcs := map[string]string{
		"long flowchart": longFlowchart,
		"onboarding":     onboarding,
	}
	for _, glob := range []string{"testdata/*.dot", "../corpus/testdata/src/*.dot"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			srcs[f] = string(b)
		}
	}
	for _, n := range []int{4, 8, 12, 16, 24, 40} {
		var tree, labelled, tall strings.Builder
		for i := 1; i < n; i++ {
			fmt.Fprintf(&tree, "t%d -> t%d; ", (i-1)/2, i)
			fmt.Fprintf(&labelled, "s%d -> s%d [label=\"next\"]; ", i-1, i)
			fmt.Fprintf(&tall, "s%d -> s%d [label=\"when the\\nprevious step\\nis signed\\noff by two\"]; ", i-1, i)
		}
		srcs[fmt.Sprintf("row %d, labels of four lines", n)] = "digraph { " + tall.String() + "}"
		srcs[fmt.Sprintf("row %d", n)] = row(n)
		srcs[fmt.Sprintf("steps %d", n)] = steps(n)
		srcs[fmt.Sprintf("fan %d", n)] = fan(n)
		srcs[fmt.Sprintf("tree %d", n)] = "digraph { " + tree.String() + "}"
		srcs[fmt.Sprintf("labelled row %d", n)] = "digraph { " + labelled.String() + "}"
	}
	return srcs
}

// The estimate only saves a layout: every graph comes out exactly as
// with both layouts compared, in every aspect. Were a graph laid out in
// another direction than the comparison picks, its picture would differ.
func TestShortcutKeepsTheDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("lays out each graph many times")
	}
	saved := 0
	for name, src := range directionSources(t) {
		for _, aspect := range []string{render.AspectLandscape, render.AspectPortrait, render.AspectSquare} {
			d := Diagram{Source: src, Aspect: aspect}
			want, both := layoutsFor(t, d, false)
			got, n := layoutsFor(t, d, true)
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %s: the picture differs from the one with both layouts compared", name, aspect)
			}
			if n > both {
				t.Errorf("%s, %s: %d layouts, %d without the estimate", name, aspect, n, both)
			}
			saved += int(both - n)
		}
	}
	t.Logf("the estimate saved %d layouts", saved)
	// The estimate must have been put to the test at all.
	if saved < 5 {
		t.Errorf("the estimate saved %d layouts over all graphs, want at least 5", saved)
	}
}

// A second-direction layout that does not beat the least elongated first
// layout the estimate allows is not kept without laying out the first.
func TestShortcutHolds(t *testing.T) {
	for _, c := range []struct {
		aspect   string
		est, r2  float64
		want     bool
		whyNotOK string
	}{
		{render.AspectLandscape, 20, 0.3, true, ""},
		{render.AspectLandscape, 20, 0.1, false, "20/2 = 10:1 is closer to 1.6 than 0.1 is"},
		{render.AspectLandscape, 8, 0.2, false, "8/2 = 4:1 is closer to 1.6 than 0.2 is"},
		{render.AspectPortrait, 0.05, 1.2, true, ""},
		{render.AspectPortrait, 0.05, 8, false, "0.1 is closer to 0.7 than 8 is"},
		{render.AspectSquare, 12, 0.4, true, ""},
	} {
		if got := shortcutHolds(c.aspect, c.est, c.r2); got != c.want {
			t.Errorf("shortcutHolds(%s, %g, %g) = %v, want %v %s", c.aspect, c.est, c.r2, got, c.want, c.whyNotOK)
		}
	}
}

// BenchmarkLayoutOnboarding draws the create_document benchmark's
// diagram, with both directions laid out as without the estimate and
// with it, and reports the worker process's CPU time per diagram
// (utime and stime from /proc/<pid>/stat, in clock ticks of 10 ms: run
// enough iterations) beside the layouts asked of it.
func BenchmarkLayoutOnboarding(b *testing.B) {
	for _, c := range []struct {
		name     string
		estimate bool
	}{{"both", false}, {"estimate", true}} {
		b.Run(c.name, func(b *testing.B) {
			saved := shortcut
			shortcut = c.estimate
			defer func() { shortcut = saved }()
			d := Diagram{Source: onboarding, Aspect: render.AspectLandscape}
			if _, err := Render(context.Background(), d); err != nil {
				b.Fatal(err)
			}
			cpu0, layouts0 := workerCPU(b), layoutsStarted.Load()
			for b.Loop() {
				if _, err := Render(context.Background(), d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(workerCPU(b)-cpu0)*10/float64(b.N), "worker-cpu-ms/op")
			b.ReportMetric(float64(layoutsStarted.Load()-layouts0)/float64(b.N), "layouts/op")
		})
	}
}

// workerCPU is the current worker's user and system time in clock ticks.
func workerCPU(b *testing.B) int64 {
	b.Helper()
	if current == nil {
		b.Fatal("no worker")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", current.cmd.Process.Pid))
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return utime + stime
}
