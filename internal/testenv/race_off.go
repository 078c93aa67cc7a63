//go:build !race

package testenv

// RaceEnabled reports a build with the race detector (race_on.go).
const RaceEnabled = false
