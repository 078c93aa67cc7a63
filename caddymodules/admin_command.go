package caddymodules

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/cli"
)

func adminCommand(cmd *cobra.Command) {
	addConfigFlags(cmd)
	cli.Admin(cmd, mintAdminToken)
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
