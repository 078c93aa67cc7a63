//go:build race

package testenv

// RaceEnabled reports a build with the race detector, under which what a
// test measures of memory is the detector's as much as the code's: it
// keeps shadow memory for every object and stack, and makes sync.Pool
// drop what is put back at random.
const RaceEnabled = true
