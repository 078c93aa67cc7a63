package diagram

import (
	"fmt"
	"strings"
)

// theme holds the colours of one look, as Graphviz colour strings. The
// backgrounds match the chart renderer's so that charts and diagrams sit
// together in one document; text colours meet WCAG AA on their fills.
type theme struct {
	background   string
	text         string // node labels
	nodeFill     string
	nodeBorder   string
	edge         string
	edgeText     string
	clusterFill  string
	clusterLine  string
	clusterText  string
	clusterInner string // fill of clusters nested in another cluster
}

var lightTheme = theme{
	background:   "#ffffff",
	text:         "#1f2328",
	nodeFill:     "#e8f1fa",
	nodeBorder:   "#3b76b0",
	edge:         "#5f6672",
	edgeText:     "#3a4049",
	clusterFill:  "#f5f7f9",
	clusterLine:  "#c9d1da",
	clusterText:  "#3a4049",
	clusterInner: "#ebeff3",
}

var darkTheme = theme{
	background:   "#17191e",
	text:         "#f0f3f6",
	nodeFill:     "#1e3347",
	nodeBorder:   "#56b4e9",
	edge:         "#a2aab4",
	edgeText:     "#d0d5db",
	clusterFill:  "#1f2329",
	clusterLine:  "#3a414c",
	clusterText:  "#d0d5db",
	clusterInner: "#272c34",
}

// The defaults' font, text sizes (points) and styles. Graphviz sizes
// boxes with its built-in Helvetica metrics, which match Go Regular (the
// face the labels are drawn with) to within about 2 %.
const (
	defaultFont         = "Helvetica"
	nodeFontSize        = 14
	edgeFontSize        = 11
	clusterFontSize     = 13
	defaultNodeStyle    = "rounded,filled"
	defaultClusterStyle = "rounded,filled"
)

// roundedShapes are the node shapes whose corners are rounded by
// default. Graphviz clips edges at the unrounded outline, so rounding a
// pointed shape (a diamond's tips) would leave a gap before the arrow.
var roundedShapes = map[string]bool{
	"box": true, "rect": true, "rectangle": true, "square": true,
	"record": true, "component": true, "tab": true, "folder": true,
}

// defaultStatements returns the DOT attribute statements placed at the
// start of a graph's body: the theme's look. The layout direction is
// chosen after parsing (see layoutLocked).
func defaultStatements(t *theme) string {
	var b strings.Builder
	graph := []string{
		attr("fontname", defaultFont),
		attr("fontsize", fmt.Sprint(clusterFontSize)),
		attr("fontcolor", t.clusterText),
		attr("bgcolor", t.background),
		// These apply to clusters only: the root graph's background is
		// bgcolor.
		attr("style", defaultClusterStyle),
		attr("color", t.clusterLine),
		attr("fillcolor", t.clusterFill),
		attr("labeljust", "l"),
		attr("nodesep", "0.3"),
		attr("ranksep", "0.45"),
	}
	fmt.Fprintf(&b, "graph [%s]; ", strings.Join(graph, " "))
	fmt.Fprintf(&b, "node [%s]; ", strings.Join([]string{
		attr("shape", "box"),
		attr("style", defaultNodeStyle),
		attr("fontname", defaultFont),
		attr("fontsize", fmt.Sprint(nodeFontSize)),
		attr("fontcolor", t.text),
		attr("color", t.nodeBorder),
		attr("fillcolor", t.nodeFill),
		attr("penwidth", "1.2"),
		attr("margin", "0.16,0.07"),
		attr("height", "0.42"),
	}, " "))
	fmt.Fprintf(&b, "edge [%s];", strings.Join([]string{
		attr("fontname", defaultFont),
		attr("fontsize", fmt.Sprint(edgeFontSize)),
		attr("fontcolor", t.edgeText),
		attr("color", t.edge),
		attr("penwidth", "1.2"),
		attr("arrowsize", "0.8"),
	}, " "))
	return b.String()
}

func attr(name, value string) string {
	return name + `="` + value + `"`
}
