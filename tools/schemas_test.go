package tools

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// TestSchemasAreDocumented keeps docs/tools.md in step with Schemas: the
// ```json block after each "### name" heading must be the tool's schema.
func TestSchemasAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)### `([a-z_]+)`.*?```json\n(.*?)\n```")
	found := map[string]bool{}
	for _, m := range block.FindAllSubmatch(doc, -1) {
		name := string(m[1])
		schema, ok := Schemas[name]
		if !ok {
			t.Errorf("docs/tools.md documents unknown tool %q", name)
			continue
		}
		found[name] = true
		var a, b bytes.Buffer
		if err := json.Compact(&a, schema); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", name, err)
		}
		if err := json.Compact(&b, m[2]); err != nil {
			t.Fatalf("%s: documented schema is not JSON: %v", name, err)
		}
		if a.String() != b.String() {
			t.Errorf("%s: docs/tools.md differs from Schemas:\n doc:  %s\n code: %s", name, b.String(), a.String())
		}
	}
	for name := range Schemas {
		if !found[name] {
			t.Errorf("%s is not documented in docs/tools.md", name)
		}
	}
}

func TestSchemasAreObjects(t *testing.T) {
	for name, s := range Schemas {
		var v struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
			Additional *bool          `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s, &v); err != nil || v.Type != "object" || len(v.Required) == 0 {
			t.Errorf("%s: not an object schema with required fields: %v", name, err)
		}
		if v.Additional == nil || *v.Additional {
			t.Errorf("%s: admits properties it does not list", name)
		}
		for _, r := range v.Required {
			if _, ok := v.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", name, r)
			}
		}
	}
}
