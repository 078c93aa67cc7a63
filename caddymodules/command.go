package caddymodules

import (
	"context"
	"encoding/json"
	"fmt"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/cli"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
)

func init() {
	registerCLI(caddycmd.Command{
		Name:      "bootstrap",
		Usage:     "[--account <name>] [--usd <amount>] [--config <path> [--adapter <name>]]",
		Short:     "Creates a first account with a balance and a key when the store is empty",
		Long:      cli.BootstrapHelp,
		CobraFunc: storeCommand(cli.Bootstrap),
	}, "switchyard bootstrap --account dev --usd 10")
	registerCLI(caddycmd.Command{
		Name:      "accounts",
		Usage:     "create|list|show|topup|disable|enable|alerts [--config <path> [--adapter <name>]]",
		Short:     "Creates, lists, tops up, shows, disables and enables accounts; sets their alerts",
		Long:      cli.AccountsHelp,
		CobraFunc: storeCommand(cli.Accounts),
	}, "switchyard accounts list --json",
		"switchyard accounts create --account acme --usd 25",
		"switchyard accounts topup --account acme --usd 12.50 --reference inv-2026-001")
	registerCLI(caddycmd.Command{
		Name:      "keys",
		Usage:     "create|list|revoke [--config <path> [--adapter <name>]]",
		Short:     "Creates, lists and revokes API keys",
		Long:      cli.KeysHelp,
		CobraFunc: storeCommand(cli.Keys),
	}, "switchyard keys create --account acme --label \"ci runner\"",
		"switchyard keys list --account acme --json",
		"switchyard keys revoke key_7PqW2m")
	registerCLI(caddycmd.Command{
		Name:      "usage",
		Usage:     "--account <name> [--since <date>] [--until <date>] [--by day|key|user] [--json] [--config <path> [--adapter <name>]]",
		Short:     "Summarises an account's usage by day, key or end user",
		Long:      cli.UsageHelp,
		CobraFunc: storeCommand(cli.Usage),
	}, "switchyard usage --account acme --since 2026-01-01 --by key",
		"switchyard usage --account acme --json")
	registerCLI(caddycmd.Command{
		Name:      "admin",
		Usage:     "token [--account <name> | --operator] [--ttl 12h] [--subject <name>] [--config <path> [--adapter <name>]]",
		Short:     "Mints tokens for the admin API and the dashboard",
		Long:      cli.AdminHelp,
		CobraFunc: adminCommand,
	}, "switchyard admin token --account acme --ttl 1h",
		"switchyard admin token --operator --ttl 15m")
}

func addConfigFlags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringP("config", "c", "", "Configuration file whose switchyard app names the store (default: environment)")
	cmd.PersistentFlags().StringP("adapter", "a", "", "Name of config adapter to apply")
}

// storeCommand is a command of package cli that works on the store the
// --config flag names.
func storeCommand(setup func(*cobra.Command, cli.Opener)) func(*cobra.Command) {
	return func(cmd *cobra.Command) {
		addConfigFlags(cmd)
		setup(cmd, openCLI)
	}
}

// openCLI opens the store the server uses, as the settings that --config
// (or the environment) name find it.
func openCLI(ctx context.Context, cmd *cobra.Command) (*cli.Env, error) {
	app, err := cliApp(cmd)
	if err != nil {
		return nil, err
	}
	s, err := app.resolve()
	if err != nil {
		return nil, err
	}
	if err := s.LoadKeySecret(); err != nil {
		return nil, err
	}
	hasher, err := policy.NewKeyHasher(s.KeySecret)
	if err != nil {
		return nil, err
	}
	store, err := node.OpenStore(ctx, s)
	if err != nil {
		return nil, err
	}
	asJSON, _ := cmd.Flags().GetBool("json")
	return &cli.Env{Store: store, Hasher: hasher, Profile: s.Profile, Out: cmd.OutOrStdout(), JSON: asJSON}, nil
}

// cliApp reads the switchyard app from --config, or returns an empty one
// that takes everything from the environment, as the server would.
func cliApp(cmd *cobra.Command) (*App, error) {
	app := new(App)
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		return app, nil
	}
	adapter, _ := cmd.Flags().GetString("adapter")
	cfgJSON, _, _, err := caddycmd.LoadConfig(path, adapter)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Apps map[string]json.RawMessage `json:"apps"`
	}
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return nil, fmt.Errorf("reading %s: %v", path, err)
	}
	if raw, ok := cfg.Apps["switchyard"]; ok {
		if err := json.Unmarshal(raw, app); err != nil {
			return nil, fmt.Errorf("reading the switchyard app in %s: %v", path, err)
		}
	}
	return app, nil
}
