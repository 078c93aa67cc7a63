package policy

import (
	"testing"
	"time"

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

// A charge id carries the time it was made at, in milliseconds, as
// uuid.NewV7's do, and 62 random bits that differ from id to id.
func TestChargeIDsCarryTheirTime(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	id, err := uuid.Parse(NewChargeID())
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	sec, nsec := id.Time().UnixTime()
	if at := time.Unix(sec, nsec); at.Before(before) || at.After(after) {
		t.Errorf("made between %v and %v, says %v", before, after, at)
	}
	if id.Variant() != uuid.RFC4122 {
		t.Errorf("variant %v", id.Variant())
	}
	other := newChargeUUID()
	if [8]byte(id[8:]) == [8]byte(other[8:]) {
		t.Errorf("two ids with the same random bits: %v, %v", id, other)
	}
}

func BenchmarkNewChargeID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newChargeUUID()
	}
}
