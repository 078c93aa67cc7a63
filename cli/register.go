package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// Command is one management command as the binary registers it, ahead of
// Caddy's: its help, and what sets its subcommands and flags up.
type Command struct {
	Name, Usage, Short, Long string
	// Command lines without a prompt, for the command's help; the first
	// is also listed in the binary's.
	Examples []string
	setup    func(*cobra.Command)
	noConfig bool // no --config or --adapter: the command needs no store
}

// Summary is a command as the binary's help lists it.
type Summary struct {
	Name    string
	Short   string
	Example string // one command line, without a prompt
}

// Commands are the management commands, in the order help shows them: the
// order a new deployment needs them. Those that work on the store open
// it with open; admin token signs with mint.
func Commands(open Opener, mint Minter) []Command {
	store := func(setup func(*cobra.Command, Opener)) func(*cobra.Command) {
		return func(cmd *cobra.Command) { setup(cmd, open) }
	}
	return []Command{{
		Name:     "bootstrap",
		Usage:    "[--account <name>] [--usd <amount>] [--config <path> [--adapter <name>]]",
		Short:    "Creates a first account with a balance and a key when the store is empty",
		Long:     BootstrapHelp,
		Examples: []string{"switchyard bootstrap --account dev --usd 10"},
		setup:    store(Bootstrap),
	}, {
		Name:  "accounts",
		Usage: "create|list|show|topup|disable|enable|alerts [--config <path> [--adapter <name>]]",
		Short: "Creates, lists, tops up, shows, disables and enables accounts; sets their alerts",
		Long:  AccountsHelp,
		Examples: []string{"switchyard accounts list --json",
			"switchyard accounts create --account acme --usd 25",
			"switchyard accounts topup --account acme --usd 12.50 --reference inv-2026-001"},
		setup: store(Accounts),
	}, {
		Name:  "keys",
		Usage: "create|list|revoke [--config <path> [--adapter <name>]]",
		Short: "Creates, lists and revokes API keys",
		Long:  KeysHelp,
		Examples: []string{"switchyard keys create --account acme --label \"ci runner\"",
			"switchyard keys list --account acme --json",
			"switchyard keys revoke key_7PqW2m"},
		setup: store(Keys),
	}, {
		Name:  "usage",
		Usage: "--account <name> [--since <date>] [--until <date>] [--by day|key|user] [--json] [--config <path> [--adapter <name>]]",
		Short: "Summarises an account's usage by day, key or end user",
		Long:  UsageHelp,
		Examples: []string{"switchyard usage --account acme --since 2026-01-01 --by key",
			"switchyard usage --account acme --json"},
		setup: store(Usage),
	}, {
		Name:  "admin",
		Usage: "token [--account <name> | --operator] [--ttl 12h] [--subject <name>] [--config <path> [--adapter <name>]]",
		Short: "Mints tokens for the admin API and the dashboard",
		Long:  AdminHelp,
		Examples: []string{"switchyard admin token --account acme --ttl 1h",
			"switchyard admin token --operator --ttl 15m"},
		setup: func(cmd *cobra.Command) { Admin(cmd, mint) },
	}, {
		Name:  "demo-backend",
		Usage: "--listen <addr> [--ttft <duration>] [--token-delay <duration>] [--model <name>] [--api-key <key>] [--reasoning]",
		Short: "Serves a deterministic OpenAI-compatible model backend for trying and benchmarking the gateway",
		Long: `
Serves GET /v1/models and POST /v1/chat/completions (JSON and streams, with
usage) with deterministic answers, so the gateway can be tried and
benchmarked without a model server. --ttft and --token-delay simulate
generation speed. See docs/demo-backend.md.
`,
		Examples: []string{"switchyard demo-backend --listen 127.0.0.1:9090 --ttft 200ms --token-delay 20ms"},
		setup:    demoBackend,
		noConfig: true,
	}}
}

// demoBackend sets up "switchyard demo-backend".
func demoBackend(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("listen", "127.0.0.1:9090", "Address to listen on")
	f.Duration("ttft", 0, "Delay before the first token")
	f.Duration("token-delay", 0, "Delay between tokens")
	f.StringSlice("model", nil, "Model names to list and accept (default: list switchyard-demo, accept any)")
	f.String("api-key", "", "Require this bearer key")
	f.Bool("reasoning", false, "Begin demo answers with reasoning_content")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var opts demobackend.Options
		addr, _ := f.GetString("listen")
		opts.TimeToFirstToken, _ = f.GetDuration("ttft")
		opts.InterTokenDelay, _ = f.GetDuration("token-delay")
		opts.Models, _ = f.GetStringSlice("model")
		opts.APIKey, _ = f.GetString("api-key")
		opts.Reasoning, _ = f.GetBool("reasoning")
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return demobackend.ListenAndServe(ctx, addr, opts)
	}
}

// Setup gives cmd the --config and --adapter flags, which name the
// config whose switchyard app names the store (unless c needs none), then
// c's subcommands, flags and examples.
func (c Command) Setup(cmd *cobra.Command) {
	if !c.noConfig {
		c.addConfigFlags(cmd)
	}
	c.setup(cmd)
	cmd.Example = ExampleText(c.Examples...)
}

func (Command) addConfigFlags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringP("config", "c", "", "Configuration file whose switchyard app names the store (default: environment)")
	cmd.PersistentFlags().StringP("adapter", "a", "", "Name of config adapter to apply")
}

// Summary is c as the binary's help lists it.
func (c Command) Summary() Summary {
	return Summary{Name: c.Name, Short: c.Short, Example: c.Examples[0]}
}
