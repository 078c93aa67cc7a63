package translator

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

type describedTool struct{ name, description, schema string }

func (d *describedTool) Name() string            { return d.name }
func (d *describedTool) Description() string     { return d.description }
func (d *describedTool) Schema() json.RawMessage { return json.RawMessage(d.schema) }
func (d *describedTool) Execute(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{}, nil
}

// Requests offered the same tools share one encoding of them; a tool
// whose definition changed under the same name is encoded anew.
func TestToolSetsShareTheEncodedTools(t *testing.T) {
	a := &describedTool{"a", "Does a.", `{"type":"object"}`}
	b := &describedTool{"b", "Does b.", `{"type":"object","properties":{}}`}
	var sets toolSets
	first := sets.of([]tools.Tool{a, b})
	if want := upstream.EncodeTools(first.defs); !bytes.Equal(first.json, want) {
		t.Fatalf("the set's JSON is\n%s\nwant\n%s", first.json, want)
	}
	if again := sets.of([]tools.Tool{a, b}); again != first {
		t.Error("the same tools were encoded again")
	}
	if other := sets.of([]tools.Tool{b}); other == first || len(other.defs) != 1 || other.defs[0].Function.Name != "b" {
		t.Errorf("another set got %+v", other.defs)
	}
	b2 := &describedTool{"b", "Does b, differently.", b.schema}
	changed := sets.of([]tools.Tool{a, b2})
	if changed == first || changed.defs[1].Function.Description != b2.description ||
		!bytes.Contains(changed.json, []byte(b2.description)) {
		t.Errorf("a changed definition was served from the kept set: %s", changed.json)
	}
	if none := sets.of(nil); none.defs != nil || none.json != nil {
		t.Errorf("no tools gave %+v", none)
	}
}

// Requests offered the same tools by a registry share one tools.Set,
// whose tools and capabilities are those each request was offered.
func TestToolSetsShareTheOfferedSet(t *testing.T) {
	reg := &tools.Registry{}
	a := &describedTool{"a", "Does a.", `{"type":"object"}`}
	b := &describedTool{"b", "Does b.", `{"type":"object"}`}
	if err := reg.Register(tools.Always, a); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(tools.WebSearch, b); err != nil {
		t.Fatal(err)
	}
	var sets toolSets
	// A set kept by of, without its tools.Set, is made again with one.
	sets.of([]tools.Tool{a, b})
	first := sets.forSet(reg.Offer(tools.Mode{Search: true}))
	again := sets.forSet(reg.Offer(tools.Mode{Search: true}))
	if again != first {
		t.Error("the same tools were encoded twice")
	}
	if c, ok := again.set.Capability("b"); !ok || c != tools.WebSearch || again.set.Len() != 2 {
		t.Errorf("the shared set is %d tools, b's capability %v (%v)", again.set.Len(), c, ok)
	}
	if only := sets.forSet(reg.Offer(tools.Mode{})); only == first || only.set.Len() != 1 {
		t.Errorf("a request offered only a got %d tools", only.set.Len())
	}
	if none := sets.forSet(tools.Set{}); none.set.Len() != 0 || none.defs != nil {
		t.Errorf("a request offered no tools got %d", none.set.Len())
	}
}
