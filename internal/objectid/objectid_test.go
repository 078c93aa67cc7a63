package objectid

import "testing"

func TestParse(t *testing.T) {
	cases := []struct {
		id    string
		class Class
		n     int64
		ok    bool
	}{
		{"obj1", Final, 1, true},
		{"el42", Element, 42, true},
		{"obj0", 0, 0, false},
		{"obj01", 0, 0, false},
		{"obj", 0, 0, false},
		{"el-1", 0, 0, false},
		{"OBJ1", 0, 0, false},
		{"obj1x", 0, 0, false},
		{"obj9999999999999999999", 0, 0, false},
		{"doc1", 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			c, n, ok := Parse(tc.id)
			if ok != tc.ok || (ok && (c != tc.class || n != tc.n)) {
				t.Errorf("got %v %d %v", c, n, ok)
			}
			if ok && Format(c, n) != tc.id {
				t.Errorf("Format round trip gave %q", Format(c, n))
			}
		})
	}
}
