package caddymodules

import (
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
)

const adminHelp = `
  switchyard admin token --operator | --account NAME [--ttl 12h] [--subject NAME]
      Mints an HS256 token for the admin API (docs/admin.md) and prints it
      alone on the last line. The secret is $SWITCHYARD_ADMIN_JWT_SECRET or,
      with the embedded store, data_dir/admin_jwt_secret (created if new,
      as the server would). The token carries aud $SWITCHYARD_ADMIN_AUDIENCE
      (default switchyard) and iss $SWITCHYARD_ADMIN_ISSUER when set.
      Anyone holding an operator token manages every account until it
      expires: keep lifetimes short.
`

func adminCommand(cmd *cobra.Command) {
	addConfigFlags(cmd)
	token := &cobra.Command{
		Use:   "token --operator | --account NAME [--ttl 12h]",
		Short: "Mints an admin API token; prints it alone on the last line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mintToken(cmd)
		},
	}
	token.Flags().String("account", "", "Account the token may manage")
	token.Flags().Bool("operator", false, "Mint an operator token, which may manage every account")
	token.Flags().Duration("ttl", 12*time.Hour, "Lifetime of the token")
	token.Flags().String("subject", "switchyard-cli", "The token's sub claim, as the audit log records it")
	cmd.AddCommand(token)
}

func mintToken(cmd *cobra.Command) error {
	account, _ := cmd.Flags().GetString("account")
	operator, _ := cmd.Flags().GetBool("operator")
	ttl, _ := cmd.Flags().GetDuration("ttl")
	subject, _ := cmd.Flags().GetString("subject")
	if operator == (account != "") {
		return fmt.Errorf("give exactly one of --operator and --account NAME")
	}
	if ttl <= 0 {
		return fmt.Errorf("--ttl must be positive")
	}
	app, err := cliApp(cmd)
	if err != nil {
		return err
	}
	s, err := app.resolve()
	if err != nil {
		return err
	}
	repl := caddy.NewReplacer()
	secret, err := s.adminSecret(repl, "")
	if err != nil {
		return err
	}
	if secret == nil {
		return errNoAdminSecret
	}
	tok, err := admin.Mint(admin.MintConfig{
		Secret:   secret,
		Subject:  subject,
		Operator: operator,
		Account:  account,
		TTL:      ttl,
		Issuer:   value(repl, "", envAdminIssuer),
		Audience: value(repl, "", envAdminAudience),
	})
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	scope := "account " + account
	if operator {
		scope = "every account (operator)"
	}
	fmt.Fprintf(out, "Admin API token for %s, valid until %s:\n", scope,
		time.Now().Add(ttl).UTC().Format(time.RFC3339))
	fmt.Fprintln(out, tok)
	return nil
}

var errNoAdminSecret = errors.New("no admin JWT secret: set " + envAdminJWTSecret + ", or use the embedded store, which generates one")
