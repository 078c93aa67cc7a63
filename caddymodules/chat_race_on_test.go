//go:build race

package caddymodules

// raceEnabled: the race detector keeps shadow memory for every object and
// stack, so memory measured under it is the detector's.
const raceEnabled = true
