package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/storage"
)

// AutoTopUpHelp is the long help of "switchyard accounts autotopup".
const AutoTopUpHelp = `
An account's automatic top-up: when a charge leaves the balance below the
threshold, the gateway charges the card saved by the account's last Stripe
Checkout for the amount, off-session, and credits the balance once Stripe
confirms the payment (see docs/payments.md, "Auto top-up"). Off by default.
The same settings as GET and PUT /admin/accounts/{name}/autotopup; --json
prints what the admin API answers.

  switchyard accounts autotopup show --account NAME [--json]
      The settings, whether a card is saved, an attempt in flight and the
      failures in a row.
  switchyard accounts autotopup set --account NAME [--enabled]
      --threshold-usd USD --amount-usd USD [--json]
      Replaces the settings. Without --enabled auto top-up is off. The amount
      is within the top-up bounds ($5 to $1,000). A card is saved by the next
      Checkout paid while auto top-up is on. After 3 failed payments in a row
      auto top-up turns itself off and the account's alerts say so.
`

// autoTopUpCommand is "switchyard accounts autotopup".
func autoTopUpCommand(open Opener) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "autotopup show|set --account NAME",
		Short: "Shows or sets an account's automatic top-up with a saved card",
		Long:  AutoTopUpHelp,
		Args:  cobra.NoArgs,
	}
	show := accountCommand(open, "show --account NAME [--json]", "Shows an account's auto top-up settings and state",
		func(ctx context.Context, c *Env, acct storage.Account) error {
			at, ok := c.Store.(storage.AutoTopUps)
			if !ok {
				return fmt.Errorf("this store keeps no auto top-up settings")
			}
			s, err := at.AutoTopUp(ctx, acct.ID)
			if err != nil {
				return err
			}
			return printAutoTopUp(c, acct, s)
		})
	show.Aliases = []string{"get"}
	addAutoTopUpJSONFlag(show)

	set := &cobra.Command{
		Use:   "set --account NAME [--enabled] --threshold-usd USD --amount-usd USD [--json]",
		Short: "Replaces an account's auto top-up settings",
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			in := autoTopUpFlags(cmd)
			acct, err := accountFlag(ctx, c, cmd)
			if err != nil {
				return err
			}
			// Stripe is configured on the gateway's admin handler, which
			// this command does not read: a gateway without it charges
			// nothing.
			s, err := admin.SetAutoTopUp(ctx, c.Store, c.Profile, acct.ID, in, true)
			if err != nil {
				return err
			}
			return printAutoTopUp(c, acct, s)
		}),
	}
	set.Flags().String("account", "", "Account name")
	_ = set.MarkFlagRequired("account")
	f := set.Flags()
	f.Bool("enabled", false, "Turn auto top-up on (off when not given)")
	f.String("threshold-usd", "", "Top up when a charge leaves the balance below this many dollars, such as 5 or 12.50")
	f.String("amount-usd", "", "What one top-up adds, in dollars (5 to 1000)")
	addAutoTopUpJSONFlag(set)
	set.Example = ExampleText(
		"switchyard accounts autotopup set --account acme --enabled --threshold-usd 5 --amount-usd 20",
		"switchyard accounts autotopup set --account acme   # turns auto top-up off")
	cmd.AddCommand(show, set)
	return cmd
}

func addAutoTopUpJSONFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("json", false, "Print the settings as the admin API answers GET .../autotopup, as JSON")
}

// autoTopUpFlags reads set's flags as the admin API's body.
func autoTopUpFlags(cmd *cobra.Command) admin.AutoTopUpInput {
	f := cmd.Flags()
	var in admin.AutoTopUpInput
	in.Enabled, _ = f.GetBool("enabled")
	if f.Changed("threshold-usd") {
		v, _ := f.GetString("threshold-usd")
		in.ThresholdUSD = &v
	}
	if f.Changed("amount-usd") {
		v, _ := f.GetString("amount-usd")
		in.AmountUSD = &v
	}
	return in
}

func printAutoTopUp(c *Env, acct storage.Account, s storage.AutoTopUp) error {
	if c.JSON {
		return printJSON(c.Out, admin.AutoTopUpOf(s))
	}
	writeAutoTopUp(c.Out, acct, s)
	return nil
}

// writeAutoTopUp prints the settings and state one per line.
func writeAutoTopUp(w io.Writer, acct storage.Account, s storage.AutoTopUp) {
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	state := "off"
	if s.Enabled {
		state = "on"
	}
	fmt.Fprintf(w, "Auto top-up of account %s (%s)\n", acct.Name, acct.ID)
	fmt.Fprintf(w, "State:              %s\n", state)
	fmt.Fprintf(w, "Threshold:          %s\n", billing.FormatCents(s.ThresholdCents))
	fmt.Fprintf(w, "Amount:             %s\n", billing.FormatCents(s.AmountCents))
	fmt.Fprintf(w, "Card saved:         %s\n", yesNo(s.PaymentMethodID != ""))
	fmt.Fprintf(w, "Attempt in flight:  %s\n", yesNo(s.InFlight != ""))
	fmt.Fprintf(w, "Failures in a row:  %d of %d\n", s.Failures, storage.AutoTopUpMaxFailures)
	if s.LastError != "" {
		fmt.Fprintf(w, "Last failure:       %s\n", s.LastError)
	}
}
