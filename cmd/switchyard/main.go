// Command switchyard is Caddy with the Switchyard modules and management
// subcommands built in: run it as you would run caddy.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/switchyardhq/switchyard/caddymodules"
)

func main() {
	caddycmd.Main()
}
