package policy

import (
	"testing"

	"github.com/google/uuid"
)

func TestChargeIDsGrowAndDiffer(t *testing.T) {
	prev := NewChargeID()
	seen := map[string]bool{prev: true}
	for range 10000 {
		id := NewChargeID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 {
			t.Fatalf("NewChargeID() = %q: not a UUIDv7 (%v)", id, err)
		}
		if id <= prev || seen[id] {
			t.Fatalf("NewChargeID() = %q after %q: ids must grow", id, prev)
		}
		seen[id] = true
		prev = id
	}
}
