package storage

import "testing"

func TestParseObjectID(t *testing.T) {
	cases := []struct {
		id    string
		class ObjectClass
		n     int64
		ok    bool
	}{
		{"obj1", ObjectFinal, 1, true},
		{"el42", ObjectElement, 42, true},
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
			c, n, ok := ParseObjectID(tc.id)
			if ok != tc.ok || (ok && (c != tc.class || n != tc.n)) {
				t.Errorf("got %v %d %v", c, n, ok)
			}
			if ok && ObjectID(c, n) != tc.id {
				t.Errorf("ObjectID round trip gave %q", ObjectID(c, n))
			}
		})
	}
}
