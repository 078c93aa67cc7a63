package cli

import (
	"encoding/json"
	"testing"
)

// TestListJSONIsTheAdminListObject: --json listings have the admin API's
// list object, so a script reads both alike.
func TestListJSONIsTheAdminListObject(t *testing.T) {
	id := func(s string) string { return "id-" + s }
	cases := []struct {
		items []string
		want  string
	}{
		{nil, `{"object":"list","data":[],"has_more":false,"first_id":null,"last_id":null}`},
		{[]string{"a"}, `{"object":"list","data":["A"],"has_more":false,"first_id":"id-a","last_id":"id-a"}`},
		{[]string{"a", "b", "c"}, `{"object":"list","data":["A","B","C"],"has_more":false,"first_id":"id-a","last_id":"id-c"}`},
	}
	for _, c := range cases {
		out := listJSON(c.items, func(s string) string { return string(rune(s[0] - 'a' + 'A')) }, id)
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("listJSON(%q) = %s, want %s", c.items, b, c.want)
		}
	}
}
