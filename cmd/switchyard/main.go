// Command switchyard is Caddy with the Switchyard modules and management
// commands built in: run it as you would run caddy; `switchyard help`
// lists Switchyard's commands first.
package main

import (
	"fmt"
	"os"
	"runtime"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() {
	// SWITCHYARD_PROFILE_CONTENTION=1 fills the mutex and block profiles
	// of the admin endpoint's /debug/pprof, which Go leaves empty unless
	// asked: sampling every contended lock and blocking event costs a
	// little on every one, so it is for profiling runs (make bench
	// -contention), not production.
	if os.Getenv("SWITCHYARD_PROFILE_CONTENTION") == "1" {
		runtime.SetMutexProfileFraction(5)
		runtime.SetBlockProfileRate(10_000) // one sample per 10 µs blocked
	}
	if cmd, err := newRoot().ExecuteC(); err != nil {
		msg, status := failure(cmd, err)
		if msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(status)
	}
}
