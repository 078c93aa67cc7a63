//go:build !race

package bodyconn

const raceEnabled = false
