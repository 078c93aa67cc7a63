package request

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/jsonscan"
)

// FuzzSplitJSON checks splitObject and splitArray against encoding/json
// on every valid document, and that neither panics on invalid ones.
func FuzzSplitJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x\"y","c":{"d":[1,2,{"e":"}"}]},"a":2}`,
		`[1, "two", {"three": [3]}, [], {}, null, true, -1.5e3]`,
		`{"k\u00e9y":"v\\"}`,
		`{}`, `[]`, ` { "a" : [ ] } `, `"str"`, `{"a":}`, `[1,]`,
		`{"a":1,"\u0061":2,"b":{"b":3,"\u0062":4,"b":5}}`,
		`{"\ud800x":1,"é":2,"É":3}`,
		`{"K":1,"\u212a":2}`,
		`{` + manyMembers(40) + `,"x3":"again","x\u0033":"last"}`,
		`{` + manyMembers(33) + `,"x0":"again"}`,
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
			if !objOK || len(obj.keys()) != len(wantObj) {
				t.Fatalf("splitObject %v %d members, want %d", objOK, len(obj.keys()), len(wantObj))
			}
			for k, v := range wantObj {
				if got, ok := obj.get(k); !ok || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(v)) {
					t.Fatalf("member %q: %q, want %q", k, got, v)
				}
			}
			// The first key named twice in any letter case, as a map of
			// the keys in lower case finds it.
			seen, want := map[string]bool{}, ""
			jsonscan.Members(b, func(k, _ []byte) bool {
				key, _ := decodeString(k)
				fold := strings.ToLower(key)
				if seen[fold] {
					want = key
					return false
				}
				seen[fold] = true
				return true
			})
			if _, dup, ok := splitBody(b, true); dup != want || ok != (want == "") {
				t.Fatalf("splitBody found %q twice (%v), want %q", dup, ok, want)
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
