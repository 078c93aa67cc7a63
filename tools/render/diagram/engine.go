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
// direction, and keep the one closer to the aspect.
func layoutLocked(ctx context.Context, src string, t *theme, aspect string) (*scene, error) {
	dir := directions[aspect]
	sc, chosen, err := layoutOnce(ctx, src, t, dir.first, true)
	if err != nil || !chosen {
		return sc, err
	}
	r := sc.bounds.width() / max(sc.bounds.height(), 1)
	if (r >= dir.low && r <= dir.high) || sc.nodeCount > maxRetryNodes {
		return sc, nil
	}
	other, _, err := layoutOnce(ctx, src, t, dir.second, false)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return sc, nil
	}
	r2 := other.bounds.width() / max(other.bounds.height(), 1)
	// The other direction must at least give the asked orientation,
	// unless the first layout is a strip beyond 3:1 and longer than a
	// page's text width, which a page shrinks to unreadable text: then
	// whichever comes closer wins. A small graph keeps its direction.
	long := max(sc.bounds.width(), sc.bounds.height()) > stripMinLength
	strip := long && (r > maxStrip || r < 1/maxStrip)
	oriented := aspect == render.AspectSquare || strip || (r2 >= 1) == (dir.ratio >= 1)
	if oriented && math.Abs(math.Log(r2/dir.ratio)) < math.Abs(math.Log(r/dir.ratio)) {
		return other, nil
	}
	return sc, nil
}

// layoutOnce has the worker parse and lay out src (see layoutSource), and
// reads its output. The caller holds the slot. When ctx ends first the
// worker is stopped and ctx's error returned.
func layoutOnce(ctx context.Context, src string, t *theme, rankdir string, check bool) (sc *scene, chosen bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if current == nil {
		if current, err = startWorker(); err != nil {
			return nil, false, err
		}
	}
	job := layoutJob{Source: src, Rankdir: rankdir, Check: check, ClusterFill: t.clusterFill, ClusterInner: t.clusterInner}
	if deadline, ok := ctx.Deadline(); ok {
		job.Limit = time.Until(deadline)
	}
	res, err := current.run(job, ctx.Done())
	if err == nil && res.Failure != "" {
		err = fmt.Errorf("graphviz: %s", res.Failure)
	}
	if err != nil {
		// Stopped, or failed: either way the worker is not to be
		// trusted with the next graph.
		current.stop()
		current = nil
		if errors.Is(err, errStopped) {
			return nil, false, ctx.Err()
		}
		return nil, false, err
	}
	if res.Problem != "" {
		return nil, false, &render.SourceError{Message: res.Problem}
	}
	sc, err = parseLayout(res.JSON)
	return sc, res.Chosen, err
}

// layoutSource parses and lays out src in the worker and returns
// Graphviz's json output. rankdir applies unless the source sets its
// own; chosen reports whether it applied. check asks for the complexity
// checks, which a second layout of the same source skips.
func layoutSource(src string, t *theme, rankdir string, check bool) (out []byte, chosen bool, err error) {
	g, err := instance()
	if err != nil {
		return nil, false, fmt.Errorf("starting graphviz: %w", err)
	}
	graph, err := graphviz.ParseBytes([]byte(src))
	if err != nil {
		return nil, false, graphvizError(err)
	}
	if graph == nil {
		return nil, false, sourceErrorf("no graph found")
	}
	defer graph.Close()

	nodes, err := graph.NodeNum()
	if err != nil {
		return nil, false, fmt.Errorf("counting nodes: %w", err)
	}
	edges, err := graph.EdgeNum()
	if err != nil {
		return nil, false, fmt.Errorf("counting edges: %w", err)
	}
	if nodes > MaxNodes || edges > MaxEdges {
		return nil, false, sourceErrorf("the graph has %d nodes and %d edges; at most %d nodes and %d edges are allowed: split the diagram, or group details into fewer nodes", nodes, edges, MaxNodes, MaxEdges)
	}
	if err := restrictAttributes(graph, nodes, edges); err != nil {
		return nil, false, err
	}
	// An edge spans at most (nodes-1)*maxMinlen ranks, each twice over
	// when edges have labels; most graphs are too small to need the
	// (many-call) estimate at all.
	if check && edges*2*max(nodes-1, 0)*maxMinlen > maxVirtualNodes {
		n, err := virtualNodes(graph)
		if err != nil {
			return nil, false, err
		}
		if n > maxVirtualNodes {
			return nil, false, sourceErrorf("the graph is too complex to lay out: its edges skip about %d ranks in all, at most %d are allowed; shorten long edges (or give them constraint=false), drop edge labels, or split the diagram", n, maxVirtualNodes)
		}
	}
	if graph.GetStr("rankdir") == "" {
		if err := graph.SafeSet("rankdir", rankdir, ""); err != nil {
			return nil, false, fmt.Errorf("setting rankdir: %w", err)
		}
		chosen = true
	}
	if err := adjustGraph(graph, t); err != nil {
		return nil, false, err
	}

	var buf bytes.Buffer
	if err := g.Render(context.Background(), graph, "json", &buf); err != nil {
		return nil, false, graphvizError(err)
	}
	return buf.Bytes(), chosen, nil
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
