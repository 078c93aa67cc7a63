package artifacts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

// TestEmbedsDrawnTogetherKeepTheirOrder: the pictures of a document are
// drawn at once, yet each lands under its own id, and of several broken
// embeds the first in the document is the one reported.
func TestEmbedsDrawnTogetherKeepTheirOrder(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	h.mustCall(tools.NameCreateDiagram, `{"title":"Flow","source":"digraph { a -> b -> c }"}`)
	h.mustCall(tools.NameCreateChart, `{"title":"Share","spec":{"type":"pie","labels":["A","B"],"series":[{"name":"s","values":[1,2]}]}}`)

	r := &renderer{s: h.tools[tools.NameCreateDocument].(*createTool).s, env: h.env}
	got, err := elements[struct {
		PNG     []byte
		Caption string
	}](context.Background(), r, "![](obj3) text ![](obj1) ![](obj2) ![](obj1)")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d pictures, want 3", len(got))
	}
	if got["obj2"].Caption != "Flow" || got["obj1"].Caption != "" || got["obj3"].Caption != "" {
		t.Errorf("captions: obj1 %q, obj2 %q, obj3 %q", got["obj1"].Caption, got["obj2"].Caption, got["obj3"].Caption)
	}
	for id, img := range got {
		if !strings.HasPrefix(string(img.PNG), "\x89PNG") {
			t.Errorf("%s is not a PNG", id)
		}
	}

	_, err = elements[struct {
		PNG     []byte
		Caption string
	}](context.Background(), r, "![](obj1) ![](obj8) ![](obj9)")
	if err == nil || !strings.Contains(err.Error(), "embeds obj8") {
		t.Errorf("error %v, want the first unknown id, obj8", err)
	}
}

func TestFirstError(t *testing.T) {
	errOf := func(e error) error { return e }
	bad := errors.New("bad source")
	if got := firstError(context.Background(), []error{nil, context.Canceled, bad, errors.New("later")}, errOf); got != bad {
		t.Errorf("firstError = %v, want the first failure that was not a stop", got)
	}
	if got := firstError(context.Background(), []error{nil, context.Canceled}, errOf); !errors.Is(got, context.Canceled) {
		t.Errorf("firstError = %v, want the stop when nothing else failed", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := firstError(ctx, []error{bad}, errOf); !errors.Is(got, context.Canceled) {
		t.Errorf("firstError = %v, want the caller's own end", got)
	}
}

// TestDrawOrderLongestFirst: diagrams start first, then charts, then
// pictures that are only copied; within a kind, document order. A
// renamed id counts as the element it became.
func TestDrawOrderLongestFirst(t *testing.T) {
	r := &renderer{env: &tools.Env{
		Objects: map[string]tools.ObjectRef{
			"obj1": {Kind: "chart"}, "obj2": {Kind: "diagram"}, "obj3": {Kind: "image"},
			"obj4": {Kind: "chart"}, "obj5": {Kind: "diagram"}, "obj6": {Kind: "chart"},
		},
		Elements: map[string]tools.Image{"el1": {}},
		Renamed:  map[string]string{"obj6": "el1"},
	}}
	ids := []string{"obj1", "obj2", "obj3", "obj6", "obj4", "el1", "obj9", "obj5"}
	got := r.drawOrder(ids)
	want := []int{1, 7, 0, 4, 2, 3, 5, 6} // obj2 obj5 | obj1 obj4 | obj3 obj6(el1) el1 obj9
	if !slices.Equal(got, want) {
		t.Errorf("drawOrder = %v, want %v", got, want)
	}
}
