// Command switchyard is Caddy with the Switchyard modules and management
// subcommands built in: run it as you would run caddy.
package main

import (
	"os"
	"runtime"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/switchyardhq/switchyard/caddymodules"
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
	caddycmd.Main()
}
