package diagram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goccy/go-graphviz"
	"github.com/goccy/go-graphviz/cgraph"
	"github.com/switchyardhq/switchyard/tools/render"
)

// The Graphviz worker (see worker.go) lays out one graph at a time, for
// every caller of the process. slot is the lock around it: a channel
// rather than a mutex so that a caller waiting for its turn can give up
// when its context ends. The holder of the slot owns current.
var (
	slot    = make(chan struct{}, 1)
	current *worker // nil until the first layout, and after one was stopped
)

// MaxLayoutTime bounds the layouts of one diagram. A graph within the
// node, edge and attribute bounds lays out in a few seconds at most; one
// that takes longer is stopped and refused, so that no diagram holds the
// layout engine every caller shares for long.
const MaxLayoutTime = 10 * time.Second

// layoutLimit is MaxLayoutTime; tests shorten it.
var layoutLimit = MaxLayoutTime

// Graphviz in the worker process.
var (
	gvOnce sync.Once
	gv     *graphviz.Graphviz
	gvErr  error
)

// noFiles is the file system Graphviz sees. DOT can name files (image,
// shapefile, fontpath); a diagram from a model must not read the server's
// disk, nor block on a FIFO.
type noFiles struct{}

func (noFiles) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// instance returns the worker's Graphviz context, creating it on first
// use. The WebAssembly module itself is compiled when go-graphviz is
// loaded; the context (the layout engines) is the part made here. It has
// none of go-graphviz's Go plugins: they draw PNG and JPEG output and
// load images from files, none of which a diagram uses.
func instance() (*graphviz.Graphviz, error) {
	gvOnce.Do(func() {
		graphviz.SetFileSystem(noFiles{})
		gv, gvErr = graphviz.NewWithPlugins(context.Background())
	})
	return gv, gvErr
}

// layout lays src out with Graphviz's dot engine and returns the scene
// to paint. src must hold exactly one graph (see scanGraph).
//
// It waits for the slot, then has the worker lay src out. When ctx ends,
// or the layout runs past layoutLimit, the worker is killed and the slot
// given back before layout returns: the CPU the layout burned stops with
// it, and the next caller gets a new worker.
func layout(ctx context.Context, src string, t *theme, aspect string) (*scene, error) {
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-slot }()
	limit, cancel := context.WithTimeout(ctx, layoutLimit)
	defer cancel()
	sc, err := layoutLocked(limit, src, t, aspect)
	if err != nil && limit.Err() != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, sourceErrorf("the graph took more than %s to lay out; make it smaller (fewer nodes and edges, fewer clusters), or use straighter edges (splines=polyline or splines=line)", layoutLimit)
	}
	return sc, err
}

// direction is how an aspect is reached: the rank direction tried first,
// the width-to-height ratio aimed at, and the range of ratios accepted
// without trying the other direction.
type direction struct {
	first, second string
	ratio         float64
	low, high     float64
}

var directions = map[string]direction{
	render.AspectLandscape: {first: "LR", second: "TB", ratio: 1.6, low: 1.1, high: 3.2},
	render.AspectPortrait:  {first: "TB", second: "LR", ratio: 0.7, low: 0.3, high: 0.95},
	render.AspectSquare:    {first: "TB", second: "LR", ratio: 1, low: 0.75, high: 1.35},
}

// maxRetryNodes is the largest graph laid out a second time in the other
// direction; larger ones keep the first layout, to bound the time.
const maxRetryNodes = 200

// maxStrip is the most elongated layout kept when the other direction
// comes closer to the asked aspect, even in the other orientation.
const maxStrip = 3.0

// stripMinLength is, in points, about the text width of an A4 or Letter
// page: a strip shorter than that is embedded at full size.
const stripMinLength = 470.0

// layoutLocked does the work of layout; the caller holds the slot. When
// the source sets no rankdir it may lay the graph out twice, once per
// direction, and keep the one closer to the aspect; when the graph is
// plainly a strip in the first direction, the worker lays it out in the
// second only (see direction.go).
func layoutLocked(ctx context.Context, src string, t *theme, aspect string) (*scene, error) {
	dir := directions[aspect]
	sc, res, err := layoutOnce(ctx, t, layoutJob{Source: src, Rankdir: dir.first, Check: true, Aspect: aspect})
	var se *render.SourceError
	if errors.As(err, &se) && res.Rankdir == dir.second && ctx.Err() == nil {
		// Only the second direction failed so far; the first may not,
		// and would have been kept.
		sc, res, err = layoutOnce(ctx, t, layoutJob{Source: src, Rankdir: dir.first, Check: true})
	}
	if err != nil || !res.Chosen {
		return sc, err
	}
	if res.Rankdir == dir.second {
		r2 := sc.bounds.width() / max(sc.bounds.height(), 1)
		if shortcutHolds(aspect, res.Estimate, r2) {
			return sc, nil
		}
		// The first direction's error is the graph's, as without the
		// estimate.
		first, _, err := layoutOnce(ctx, t, layoutJob{Source: src, Rankdir: dir.first})
		if err != nil {
			return nil, err
		}
		return choose(aspect, first, sc, true), nil
	}
	r := sc.bounds.width() / max(sc.bounds.height(), 1)
	if (r >= dir.low && r <= dir.high) || sc.nodeCount > maxRetryNodes {
		return sc, nil
	}
	other, _, err := layoutOnce(ctx, t, layoutJob{Source: src, Rankdir: dir.second})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return sc, nil
	}
	return choose(aspect, sc, other, false), nil
}

// choose returns the layout kept of first, in the direction aspect tries
// first, and other, in the second. otherFirst is set when other was laid
// out first: then first is kept when in range, as it would have been
// without laying out other.
func choose(aspect string, first, other *scene, otherFirst bool) *scene {
	dir := directions[aspect]
	r := first.bounds.width() / max(first.bounds.height(), 1)
	if otherFirst && ((r >= dir.low && r <= dir.high) || first.nodeCount > maxRetryNodes) {
		return first
	}
	long := max(first.bounds.width(), first.bounds.height()) > stripMinLength
	r2 := other.bounds.width() / max(other.bounds.height(), 1)
	if prefersOther(aspect, r, long, r2) {
		return other
	}
	return first
}

// prefersOther reports whether a layout in the second direction, of
// width-to-height ratio r2, is kept over one in the first, of ratio r
// outside the accepted range, whose longer side is long (longer than
// stripMinLength).
func prefersOther(aspect string, r float64, long bool, r2 float64) bool {
	dir := directions[aspect]
	// The other direction must at least give the asked orientation,
	// unless the first layout is a strip beyond 3:1 and longer than a
	// page's text width, which a page shrinks to unreadable text: then
	// whichever comes closer wins. A small graph keeps its direction.
	strip := long && (r > maxStrip || r < 1/maxStrip)
	oriented := aspect == render.AspectSquare || strip || (r2 >= 1) == (dir.ratio >= 1)
	return oriented && math.Abs(math.Log(r2/dir.ratio)) < math.Abs(math.Log(r/dir.ratio))
}

// clearStrip reports whether the estimated shape est of a graph's
// layout in the first direction of aspect is a strip longer than a
// page's text width even when off by estimateMargin, and the graph small
// enough for a second layout: the case the worker lays out in the second
// direction only.
func clearStrip(aspect string, est shapeEstimate, nodes int) bool {
	dir := directions[aspect]
	r := est.ratio(dir.first)
	long := max(est.length, est.breadth)/estimateMargin > stripMinLength
	wide := r/estimateMargin > max(dir.high, maxStrip)
	tall := r*estimateMargin < min(dir.low, 1/maxStrip)
	return nodes <= maxRetryNodes && long && (wide || tall)
}

// shortcutHolds reports whether the layout in the second direction, of
// ratio r2, beats every first layout the estimate est (a clearStrip)
// allows: the least elongated one, off by estimateMargin toward the
// accepted range, is still a long strip beyond 3:1 and out of range, and
// prefersOther is monotonic in how far r is from the asked ratio.
func shortcutHolds(aspect string, est float64, r2 float64) bool {
	bound := est / estimateMargin
	if est < directions[aspect].low {
		bound = est * estimateMargin
	}
	return prefersOther(aspect, bound, true, r2)
}

// shortcut lets the worker lay a plain strip out in the second direction
// only (see direction.go); tests turn it off to compare.
var shortcut = true

// layoutsStarted counts the layouts asked of workers, for tests.
var layoutsStarted atomic.Int64

// layoutOnce has the worker parse and lay out job's source (see
// layoutSource), and reads its output. The caller holds the slot. When
// ctx ends first the worker is stopped and ctx's error returned.
func layoutOnce(ctx context.Context, t *theme, job layoutJob) (sc *scene, res layoutResult, err error) {
	if err := ctx.Err(); err != nil {
		return nil, res, err
	}
	if current == nil {
		if current, err = startWorker(); err != nil {
			return nil, res, err
		}
	}
	job.ClusterFill, job.ClusterInner = t.clusterFill, t.clusterInner
	if !shortcut {
		job.Aspect = ""
	}
	layoutsStarted.Add(1)
	if deadline, ok := ctx.Deadline(); ok {
		job.Limit = time.Until(deadline)
	}
	res, err = current.run(job, ctx.Done())
	if err == nil && res.Failure != "" {
		err = fmt.Errorf("graphviz: %s", res.Failure)
	}
	if err != nil {
		// Stopped, or failed: either way the worker is not to be
		// trusted with the next graph.
		current.stop()
		current = nil
		if errors.Is(err, errStopped) {
			return nil, res, ctx.Err()
		}
		return nil, res, err
	}
	if res.Problem != "" {
		return nil, res, &render.SourceError{Message: res.Problem}
	}
	sc, err = parseLayout(res.JSON)
	return sc, res, err
}

// layoutSource parses and lays out job's source in the worker and
// returns Graphviz's json output. job.Rankdir applies unless the source
// sets its own; res.Chosen reports whether it applied, and res.Rankdir
// the direction laid out: the second direction of job.Aspect instead
// when the graph is plainly a strip in the first (see clearStrip).
// job.Check asks for the complexity checks, which a second layout of the
// same source skips.
func layoutSource(job layoutJob, t *theme) (res layoutResult, err error) {
	src := job.Source
	g, err := instance()
	if err != nil {
		return res, fmt.Errorf("starting graphviz: %w", err)
	}
	graph, err := graphviz.ParseBytes([]byte(src))
	if err != nil {
		return res, graphvizError(err)
	}
	if graph == nil {
		return res, sourceErrorf("no graph found")
	}
	defer graph.Close()

	nodes, err := graph.NodeNum()
	if err != nil {
		return res, fmt.Errorf("counting nodes: %w", err)
	}
	edges, err := graph.EdgeNum()
	if err != nil {
		return res, fmt.Errorf("counting edges: %w", err)
	}
	if nodes > MaxNodes || edges > MaxEdges {
		return res, sourceErrorf("the graph has %d nodes and %d edges; at most %d nodes and %d edges are allowed: split the diagram, or group details into fewer nodes", nodes, edges, MaxNodes, MaxEdges)
	}
	if err := restrictAttributes(graph, nodes, edges); err != nil {
		return res, err
	}
	// An edge spans at most (nodes-1)*maxMinlen ranks, each twice over
	// when edges have labels; most graphs are too small to need the
	// (many-call) estimate at all.
	if job.Check && edges*2*max(nodes-1, 0)*maxMinlen > maxVirtualNodes {
		n, err := virtualNodes(graph)
		if err != nil {
			return res, err
		}
		if n > maxVirtualNodes {
			return res, sourceErrorf("the graph is too complex to lay out: its edges skip about %d ranks in all, at most %d are allowed; shorten long edges (or give them constraint=false), drop edge labels, or split the diagram", n, maxVirtualNodes)
		}
	}
	if graph.GetStr("rankdir") == "" {
		res.Rankdir = job.Rankdir
		// A graph too large for a second layout keeps the first
		// direction anyway: no estimate.
		if job.Aspect != "" && nodes <= maxRetryNodes {
			est, ok, err := estimateShape(graph, job.Rankdir)
			if err != nil {
				return res, err
			}
			if ok && clearStrip(job.Aspect, est, nodes) {
				res.Rankdir = directions[job.Aspect].second
				res.Estimate = est.ratio(job.Rankdir)
			}
		}
		if err := graph.SafeSet("rankdir", res.Rankdir, ""); err != nil {
			return res, fmt.Errorf("setting rankdir: %w", err)
		}
		res.Chosen = true
	}
	if err := adjustGraph(graph, t); err != nil {
		return res, err
	}

	var buf bytes.Buffer
	if err := g.Render(context.Background(), graph, "json", &buf); err != nil {
		return res, graphvizError(err)
	}
	res.JSON = buf.Bytes()
	return res, nil
}

// adjustGraph fixes what defaults cannot express before the layout runs.
func adjustGraph(g *cgraph.Graph, t *theme) error {
	// Text-only shapes keep no box, which the default fill would draw,
	// and pointed shapes keep their points (see roundedShapes).
	for n, err := g.FirstNode(); n != nil; n, err = g.NextNode(n) {
		if err != nil {
			return fmt.Errorf("walking nodes: %w", err)
		}
		if n.GetStr("style") != defaultNodeStyle {
			continue
		}
		style := defaultNodeStyle
		switch shape := strings.ToLower(n.GetStr("shape")); {
		case shape == "plaintext" || shape == "plain" || shape == "none" || shape == "underline":
			style = ""
		case !roundedShapes[shape]:
			style = "filled"
		}
		if style != defaultNodeStyle {
			if err := n.Set("style", style); err != nil {
				return fmt.Errorf("setting node style: %w", err)
			}
		}
	}
	return tintNested(g, t, 0)
}

// tintNested gives clusters inside clusters a deeper tint, so that
// nesting shows, unless the source chose their colour.
func tintNested(g *cgraph.Graph, t *theme, depth int) error {
	sub, err := g.FirstSubGraph()
	for ; sub != nil; sub, err = sub.NextSubGraph() {
		if err != nil {
			return fmt.Errorf("walking subgraphs: %w", err)
		}
		name, err := sub.Name()
		if err != nil {
			return fmt.Errorf("reading a subgraph name: %w", err)
		}
		d := depth
		if strings.HasPrefix(strings.ToLower(name), "cluster") {
			if depth%2 == 1 && sub.GetStr("fillcolor") == t.clusterFill {
				if err := sub.Set("fillcolor", t.clusterInner); err != nil {
					return fmt.Errorf("setting cluster fill: %w", err)
				}
			}
			d++
		}
		if err := tintNested(sub, t, d); err != nil {
			return err
		}
	}
	return err
}

// graphvizError sorts what Graphviz returned: its own messages describe
// the source (a syntax error, a bad HTML label) and go to the model;
// failures of the WebAssembly runtime and of the bindings ("wasm error:
// out of bounds memory access", "failed to read wasm memory") are
// internal, and end the worker.
func graphvizError(err error) error {
	msg := strings.TrimSpace(err.Error())
	if msg == "" || strings.Contains(msg, "wasm") || strings.Contains(msg, "module closed") {
		return fmt.Errorf("graphviz: %w", err)
	}
	msg = strings.TrimPrefix(msg, "Error: ")
	msg = strings.Join(strings.Fields(msg), " ")
	return sourceErrorf("%s", msg)
}
