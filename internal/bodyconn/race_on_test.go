//go:build race

package bodyconn

// raceEnabled: the race detector makes sync.Pool drop what is put back
// at random, so a pooled buffer is made anew now and then.
const raceEnabled = true
