package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// AdminHelp is the long help of "switchyard admin".
const AdminHelp = `
  switchyard admin token --operator | --account NAME [--ttl 12h] [--subject NAME]
      Mints an HS256 token for the admin API (docs/admin.md) and prints it
      alone on the last line. The secret is $SWITCHYARD_ADMIN_JWT_SECRET or,
      with the embedded store, data_dir/admin_jwt_secret (created if new,
      as the server would). The token carries aud $SWITCHYARD_ADMIN_AUDIENCE
      (default switchyard) and iss $SWITCHYARD_ADMIN_ISSUER when set.
      Anyone holding an operator token manages every account until it
      expires: keep lifetimes short.
`

// TokenRequest is what "switchyard admin token" asks to be minted.
type TokenRequest struct {
	Operator bool   // every account
	Account  string // else this one
	TTL      time.Duration
	Subject  string
}

// Minter mints the admin API token req asks for, with the secret the
// command line's settings name.
type Minter func(cmd *cobra.Command, req TokenRequest) (string, error)

// Admin sets up "switchyard admin" on cmd, with its token subcommand.
func Admin(cmd *cobra.Command, mint Minter) {
	token := &cobra.Command{
		Use:   "token --operator | --account NAME [--ttl 12h]",
		Short: "Mints an admin API token; prints it alone on the last line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mintToken(cmd, mint)
		},
	}
	token.Flags().String("account", "", "Account the token may manage")
	token.Flags().Bool("operator", false, "Mint an operator token, which may manage every account")
	token.Flags().Duration("ttl", 12*time.Hour, "Lifetime of the token")
	token.Flags().String("subject", "switchyard-cli", "The token's sub claim, as the audit log records it")
	cmd.AddCommand(token)
}

func mintToken(cmd *cobra.Command, mint Minter) error {
	var req TokenRequest
	req.Account, _ = cmd.Flags().GetString("account")
	req.Operator, _ = cmd.Flags().GetBool("operator")
	req.TTL, _ = cmd.Flags().GetDuration("ttl")
	req.Subject, _ = cmd.Flags().GetString("subject")
	if req.Operator == (req.Account != "") {
		return fmt.Errorf("give exactly one of --operator and --account NAME")
	}
	if req.TTL <= 0 {
		return fmt.Errorf("--ttl must be positive")
	}
	tok, err := mint(cmd, req)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	scope := "account " + req.Account
	if req.Operator {
		scope = "every account (operator)"
	}
	fmt.Fprintf(out, "Admin API token for %s, valid until %s:\n", scope,
		time.Now().Add(req.TTL).UTC().Format(time.RFC3339))
	fmt.Fprintln(out, tok)
	return nil
}
