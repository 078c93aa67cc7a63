package main

import (
	"os"
	"testing"
	"time"
)

// TestCPUTimeGrowsWithWork: the bench's own CPU time, read as it reads a
// proxy's, grows by about the work done in between.
func TestCPUTimeGrowsWithWork(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin, reading the time as we go: a reading stuck on a field that
	// does not move fails after 10 s of wall time.
	deadline := time.Now().Add(10 * time.Second)
	var after time.Duration
	x := 0
	for time.Now().Before(deadline) {
		for i := range 1_000_000 {
			x += i
		}
		if after, err = cpuTime(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if after-before >= 100*time.Millisecond {
			break
		}
	}
	if after-before < 100*time.Millisecond {
		t.Fatalf("10 s of spinning raised the CPU time from %s to %s (x=%d)", before, after, x)
	}
}
