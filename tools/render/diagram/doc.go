// Package diagram renders Graphviz DOT diagrams to PNG: the renderer
// behind the create_diagram tool.
//
// The layout is Graphviz's own, from github.com/goccy/go-graphviz, which
// runs Graphviz compiled to WebAssembly within the program, so the output
// is the same on machines without Graphviz installed. go-graphviz's PNG
// output is not used: it loses node borders and most edges. Instead
// Graphviz writes its "json" output, which carries every object's xdot
// drawing operations (the same polygons, Bézier splines, ellipses and
// text positions its SVG and cairo renderers draw), and this package
// paints those operations with git.sr.ht/~sbinet/gg, the rasteriser
// charts are drawn with too (gonum/plot's vgimg), and the Go fonts.
// Shapes, arrowheads, HTML labels and clusters therefore come out as
// Graphviz placed them, and no layout logic lives here. Graphviz is
// started without go-graphviz's PNG and JPEG plugins, so their own
// rasteriser is not linked either.
//
// Before the layout, attribute statements are placed at the start of the
// graph's body: the theme's colours, rounded filled boxes for nodes,
// tinted rounded clusters, and Helvetica text. Graphviz's built-in
// Helvetica metrics match Go Regular, the face the text is drawn with, to
// about 2 %, so labels fit their boxes; text that would not is narrowed.
// Anything the source sets itself comes later in the text and wins.
//
// Graphviz runs in a worker process: this same program started again,
// which lays out one graph at a time for every caller of the process.
// Graphviz cannot be interrupted where it runs (go-graphviz compiles its
// WebAssembly module without the checks that would let wazero stop it,
// once, when the program starts), so when a caller's context ends, or a
// layout runs past MaxLayoutTime, the worker is killed: its CPU stops at
// once, the layout slot is free when Render returns, and the next layout
// starts a new worker (about a quarter of a second). A worker also goes
// after any internal failure, so whatever a hostile graph did to
// Graphviz's memory goes with it. The worker gets none of the gateway's
// environment but what the Go runtime reads.
//
// What reaches Graphviz is bounded first: one graph per source (its
// parser keeps unread text for the next call), limited nesting (deep
// recursion overwrites its memory), limited node, edge and long-edge
// counts (its crossing minimisation can run for minutes on a dense
// graph), and an allow-list of attributes (attrs.go): anything that
// names a file, picks another engine or sizes the output is dropped, the
// work bounds of dot (mclimit, nslimit, nslimit1, searchsize, minlen,
// weight) and sizes that multiply the output (peripheries, sides) are
// clamped, and orthogonal edges, whose routing grows far faster than the
// graph, are drawn as polylines beyond 100 nodes or 200 edges.
// go-graphviz compiles the module when the program starts, about 0.7 s
// the first time and 50 ms once the compiled code is cached under the
// temporary directory; the Graphviz context itself is made by the
// worker's first layout.
package diagram
