package request

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSplitJSON checks splitObject and splitArray against encoding/json
// on every valid document, and that neither panics on invalid ones.
func FuzzSplitJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x\"y","c":{"d":[1,2,{"e":"}"}]},"a":2}`,
		`[1, "two", {"three": [3]}, [], {}, null, true, -1.5e3]`,
		`{"k\u00e9y":"v\\"}`,
		`{}`, `[]`, ` { "a" : [ ] } `, `"str"`, `{"a":}`, `[1,]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, objOK := splitObject(b)
		arr, arrOK := splitArray(b)
		if !json.Valid(b) {
			return // must only not panic
		}
		var wantObj map[string]json.RawMessage
		if json.Unmarshal(b, &wantObj) == nil && wantObj != nil {
			if !objOK || len(obj) != len(wantObj) {
				t.Fatalf("splitObject %v %d members, want %d", objOK, len(obj), len(wantObj))
			}
			for k, v := range wantObj {
				if !bytes.Equal(bytes.TrimSpace(obj[k]), bytes.TrimSpace(v)) {
					t.Fatalf("member %q: %q, want %q", k, obj[k], v)
				}
			}
		} else if objOK {
			t.Fatalf("splitObject accepted a non-object")
		}
		var wantArr []json.RawMessage
		if json.Unmarshal(b, &wantArr) == nil && wantArr != nil {
			if !arrOK || len(arr) != len(wantArr) {
				t.Fatalf("splitArray %v %d elements, want %d", arrOK, len(arr), len(wantArr))
			}
			for i := range wantArr {
				if !bytes.Equal(bytes.TrimSpace(arr[i]), bytes.TrimSpace(wantArr[i])) {
					t.Fatalf("element %d: %q, want %q", i, arr[i], wantArr[i])
				}
			}
		} else if arrOK {
			t.Fatalf("splitArray accepted a non-array")
		}
	})
}
