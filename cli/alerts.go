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

// alertsCommand is "switchyard accounts alerts": an account's balance and
// key spend alerts, shown and set as GET and PUT .../alerts do.
func alertsCommand(open Opener) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alerts show|set --account NAME",
		Short: "Shows or sets an account's balance and key spend alerts",
		Long:  AlertsHelp,
		Args:  cobra.NoArgs,
	}

	show := accountCommand(open, "show --account NAME [--json]", "Shows an account's alert settings and whether its balance is below the threshold",
		func(ctx context.Context, c *Env, acct storage.Account) error {
			s, err := c.Store.AlertSettings(ctx, acct.ID)
			if err != nil {
				return err
			}
			return printAlerts(c, acct, s)
		})
	show.Aliases = []string{"get"}
	addAlertsJSONFlag(show)

	set := &cobra.Command{
		Use:   "set --account NAME [settings] [--json]",
		Short: "Replaces an account's alert settings (those not given are turned off)",
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			in, err := alertFlags(cmd)
			if err != nil {
				return err
			}
			acct, err := accountFlag(ctx, c, cmd)
			if err != nil {
				return err
			}
			// The SMTP server is configured on the gateway's admin
			// handler, which this command does not read: an address is
			// checked and kept, and a gateway without a server sends
			// nothing to it.
			s, err := admin.SetAlerts(ctx, c.Store, acct.ID, in, true)
			if err != nil {
				return err
			}
			return printAlerts(c, acct, s)
		}),
	}
	set.Flags().String("account", "", "Account name")
	_ = set.MarkFlagRequired("account")
	f := set.Flags()
	f.String("below-usd", "", "Alert when the balance falls below this many dollars, such as 10 or 12.50")
	f.Int64("below-percent", 0, "Alert when the balance falls below this share (1 to 100) of the latest top-up")
	f.Int64("key-spend-percent", 0, "Alert when a key's spend in its period reaches this share (1 to 100) of its spend limit")
	f.String("webhook-url", "", "An http(s) URL that receives a signed POST per alert")
	f.String("email", "", "An address that receives a message per alert (sent by gateways with an SMTP server)")
	f.Bool("rotate-secret", false, "Make a new webhook signing secret")
	addAlertsJSONFlag(set)
	set.Example = ExampleText(
		"switchyard accounts alerts set --account acme --below-usd 10 --key-spend-percent 80 --webhook-url https://hooks.example.com/switchyard",
		"switchyard accounts alerts set --account acme --below-percent 20 --email billing@acme.example",
		"switchyard accounts alerts set --account acme   # turns every alert off")

	cmd.AddCommand(show, set)
	return cmd
}

func addAlertsJSONFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("json", false, "Print the settings as the admin API answers GET .../alerts, as JSON")
}

// alertFlags reads set's flags as the admin API's body: a flag not given
// is null or "", which turns its alert off.
func alertFlags(cmd *cobra.Command) (admin.AlertsInput, error) {
	f := cmd.Flags()
	var in admin.AlertsInput
	if f.Changed("below-usd") {
		usd, _ := f.GetString("below-usd")
		in.BelowUSD = &usd
	}
	for name, dst := range map[string]**int64{"below-percent": &in.BelowPercent, "key-spend-percent": &in.KeySpend} {
		if f.Changed(name) {
			n, err := f.GetInt64(name)
			if err != nil {
				return in, err
			}
			*dst = &n
		}
	}
	in.WebhookURL, _ = f.GetString("webhook-url")
	in.Email, _ = f.GetString("email")
	in.RotateSecret, _ = f.GetBool("rotate-secret")
	return in, nil
}

func printAlerts(c *Env, acct storage.Account, s storage.AlertSettings) error {
	if c.JSON {
		return printJSON(c.Out, admin.AlertsOf(s))
	}
	writeAlerts(c.Out, acct, s)
	return nil
}

// writeAlerts prints the settings one per line, "off" for those unset.
func writeAlerts(w io.Writer, acct storage.Account, s storage.AlertSettings) {
	off := func(set bool, v string) string {
		if !set {
			return "off"
		}
		return v
	}
	threshold, hasThreshold := s.Threshold()
	below := "no"
	if !s.FiredAt.IsZero() {
		below = "yes, since " + tableTime(s.FiredAt)
	}
	fmt.Fprintf(w, "Alerts of account %s (%s)\n", acct.Name, acct.ID)
	fmt.Fprintf(w, "Below amount:       %s\n", off(s.BelowCents != nil, billing.FormatCents(deref(s.BelowCents))))
	fmt.Fprintf(w, "Below share:        %s\n", off(s.BelowPercent != nil, fmt.Sprintf("%d%% of the latest top-up", deref(s.BelowPercent))))
	fmt.Fprintf(w, "Threshold:          %s\n", off(hasThreshold, billing.FormatCents(threshold)))
	fmt.Fprintf(w, "Balance below it:   %s\n", off(hasThreshold, below))
	fmt.Fprintf(w, "Key spend share:    %s\n", off(s.KeySpendPercent != nil, fmt.Sprintf("%d%% of a key's spend limit", deref(s.KeySpendPercent))))
	fmt.Fprintf(w, "Webhook:            %s\n", off(s.WebhookURL != "", orDash(s.WebhookURL)))
	if s.WebhookURL != "" {
		fmt.Fprintf(w, "Webhook secret:     %s\n", s.WebhookSecret)
	}
	fmt.Fprintf(w, "Email:              %s\n", off(s.Email != "", orDash(s.Email)))
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
