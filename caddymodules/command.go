package caddymodules

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/cli"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
)

func init() {
	for _, c := range cli.Commands(openCLI, mintAdminToken) {
		caddycmd.RegisterCommand(caddycmd.Command{Name: c.Name, Usage: c.Usage, Short: c.Short, Long: c.Long, CobraFunc: c.Setup})
		cliCommands = append(cliCommands, c.Summary())
	}
}

// CLICommand is one of Switchyard's own commands as the binary's help
// lists it, ahead of Caddy's.
type CLICommand = cli.Summary

var cliCommands []CLICommand

// CLICommands lists Switchyard's commands in the order help shows them:
// the order a new deployment needs them.
func CLICommands() []CLICommand { return append([]CLICommand(nil), cliCommands...) }

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

// mintAdminToken mints the token req asks for with the admin secret the
// settings of --config (or the environment) name, as the server finds it.
func mintAdminToken(cmd *cobra.Command, req cli.TokenRequest) (string, error) {
	app, err := cliApp(cmd)
	if err != nil {
		return "", err
	}
	s, err := app.resolve()
	if err != nil {
		return "", err
	}
	cfg, err := s.MintConfig(expander(caddy.NewReplacer()))
	if err != nil {
		return "", err
	}
	cfg.Subject, cfg.Operator, cfg.Account, cfg.TTL = req.Subject, req.Operator, req.Account, req.TTL
	return admin.Mint(cfg)
}
