//go:build race

package policy

// raceEnabled: the race detector makes sync.Pool drop what is put back
// at random, so allocation counts of pooled paths mean nothing under it.
const raceEnabled = true
