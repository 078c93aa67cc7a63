package caddymodules

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/cli"
)

// CLICommand is one of Switchyard's own commands as the binary's help
// lists it, ahead of Caddy's.
type CLICommand struct {
	Name    string
	Short   string
	Example string // one command line, without a prompt
}

var cliCommands []CLICommand

// CLICommands lists Switchyard's commands in the order help shows them:
// the order a new deployment needs them.
func CLICommands() []CLICommand { return append([]CLICommand(nil), cliCommands...) }

// registerCLI registers c with Caddy's command list and records it as
// Switchyard's. examples go to the command's help, the first also to the
// list.
func registerCLI(c caddycmd.Command, examples ...string) {
	setup := c.CobraFunc
	c.CobraFunc = func(cmd *cobra.Command) {
		setup(cmd)
		cmd.Example = cli.ExampleText(examples...)
	}
	caddycmd.RegisterCommand(c)
	cliCommands = append(cliCommands, CLICommand{Name: c.Name, Short: c.Short, Example: examples[0]})
}
