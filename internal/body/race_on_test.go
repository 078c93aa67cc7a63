//go:build race

package body

// raceEnabled: the race detector makes sync.Pool drop what is put back
// at random, so what a pooled path allocates means nothing under it.
const raceEnabled = true
