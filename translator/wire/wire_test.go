package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// setEvery returns deltas that each set one field of Delta, named by its
// JSON key, so that a new key cannot be forgotten by Empty or Bare.
func setEvery(t *testing.T) map[string]Delta {
	t.Helper()
	out := make(map[string]Delta)
	typ := reflect.TypeFor[Delta]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var d Delta
		v := reflect.ValueOf(&d).Elem().Field(i)
		switch f.Type.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		default:
			t.Fatalf("Delta.%s: a %s; teach this test to set one", f.Name, f.Type)
		}
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[key] = d
	}
	return out
}

func TestDeltaEmptySeesEveryKey(t *testing.T) {
	if !(Delta{}).Empty() {
		t.Fatal("the zero Delta is not empty")
	}
	for key, d := range setEvery(t) {
		if d.Empty() {
			t.Errorf("a delta with %s set is empty: add the field to Delta.Empty", key)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), `{"`+key+`":`) {
			t.Errorf("a delta with %s set encodes as %s", key, b)
		}
	}
}

// Bare keeps text and the artifact events (X-Progress-Stream: 0) and
// drops the rest.
func TestDeltaBare(t *testing.T) {
	kept := map[string]bool{"role": true, "content": true, "artifact": true, "artifact_remove": true, "artifact_rename": true}
	for key, d := range setEvery(t) {
		if got := !d.Bare().Empty(); got != kept[key] {
			t.Errorf("Bare keeps %s: %v, want %v", key, got, kept[key])
		}
	}
}

func TestArtifactWithoutInline(t *testing.T) {
	a := Artifact{Type: "chart", ObjectID: "obj1", FileID: "f", ImageBase64: "AAA", FileBase64: "BBB"}
	if w := a.WithoutInline(); w.ImageBase64 != "" || w.FileBase64 != "" {
		t.Error("base64 kept although a file id exists")
	}
	a.FileID = ""
	if w := a.WithoutInline(); w.ImageBase64 != "AAA" || w.FileBase64 != "BBB" {
		t.Error("base64 dropped although there is no file id")
	}
}
