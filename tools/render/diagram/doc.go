// Package diagram renders Graphviz DOT diagrams to PNG: the renderer
// behind the create_diagram tool.
//
// The layout is Graphviz's own, from github.com/goccy/go-graphviz, which
// runs Graphviz compiled to WebAssembly inside the process, so the output
// is the same on machines without Graphviz installed. go-graphviz's PNG
// output is not used: it loses node borders and most edges. Instead
// Graphviz writes its "json" output, which carries every object's xdot
// drawing operations (the same polygons, Bézier splines, ellipses and
// text positions its SVG and cairo renderers draw), and this package
// paints those operations with github.com/fogleman/gg and the Go fonts.
// Shapes, arrowheads, HTML labels and clusters therefore come out as
// Graphviz placed them, and no layout logic lives here.
//
// Before the layout, attribute statements are placed at the start of the
// graph's body: the theme's colours, rounded filled boxes for nodes,
// tinted rounded clusters, and Helvetica text. Graphviz's built-in
// Helvetica metrics match Go Regular, the face the text is drawn with, to
// about 2 %, so labels fit their boxes; text that would not is narrowed.
// Anything the source sets itself comes later in the text and wins.
//
// Graphviz runs as one WebAssembly instance per process, shared and not
// safe for concurrent use: layouts run one at a time. The instance cannot
// be interrupted, nor rebuilt once damaged, so what reaches it is bounded
// first: one graph per source (its parser keeps unread text for the next
// call), limited nesting (deep recursion overwrites its memory), and
// limited node, edge and long-edge counts (its crossing minimisation can
// run for minutes on a dense graph). go-graphviz compiles the module
// when the program starts, about 0.7 s the first time and 50 ms once the
// compiled code is cached under the temporary directory; the Graphviz
// context itself is made by the first Render.
package diagram
