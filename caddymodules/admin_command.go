package caddymodules

import (
	"errors"

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
	repl := caddy.NewReplacer()
	secret, err := s.adminSecret(repl, "")
	if err != nil {
		return "", err
	}
	if secret == nil {
		return "", errNoAdminSecret
	}
	return admin.Mint(admin.MintConfig{
		Secret:   secret,
		Subject:  req.Subject,
		Operator: req.Operator,
		Account:  req.Account,
		TTL:      req.TTL,
		Issuer:   value(repl, "", envAdminIssuer),
		Audience: value(repl, "", envAdminAudience),
	})
}

var errNoAdminSecret = errors.New("no admin JWT secret: set " + envAdminJWTSecret + ", or use the embedded store, which generates one")
