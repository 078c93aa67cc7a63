package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// Keys sets up "switchyard keys" on cmd, with its subcommands.
func Keys(cmd *cobra.Command, open Opener) {

	create := &cobra.Command{
		Use:   "create --account NAME [--label TEXT] [controls]",
		Short: "Creates a key; prints it once, alone on the last line",
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			account, _ := cmd.Flags().GetString("account")
			label, _ := cmd.Flags().GetString("label")
			controls, err := keyControlFlags(cmd).Controls(time.Now())
			if err != nil {
				return err
			}
			key, rec, err := policy.IssueKeyWith(ctx, c.Store, c.Hasher, c.Profile, account, label, controls, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "Created key %s (%s) for account %s. It is shown only this once:\n", rec.ID, rec.Hint, account)
			fmt.Fprintln(c.Out, key)
			return nil
		}),
	}
	create.Flags().String("account", "", "Account name (created if new)")
	create.Flags().String("label", "", "A note to tell keys apart")
	_ = create.MarkFlagRequired("account")
	addKeyControlFlags(create)

	set := &cobra.Command{
		Use:   "set KEY_ID [controls]",
		Short: "Replaces a key's controls (those not given are lifted), on every node at once",
		Args:  cobra.ExactArgs(1),
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, args []string) error {
			controls, err := keyControlFlags(cmd).Controls(time.Now())
			if err != nil {
				return err
			}
			k, err := policy.SetKeyControls(ctx, c.Store, "", args[0], controls, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "Set the controls of key %s (%s).\n", k.ID, k.Hint)
			return nil
		}),
	}
	addKeyControlFlags(set)

	list := accountCommand(open, "list --account NAME [--json]", "Lists an account's keys, never the keys themselves",
		func(ctx context.Context, c *Env, acct storage.Account) error {
			keys, err := c.Store.ListKeys(ctx, acct.ID)
			if err != nil {
				return err
			}
			if c.JSON {
				return printJSON(c.Out, listJSON(keys, admin.KeyOf, func(k storage.APIKey) string { return k.ID }))
			}
			printKeys(c.Out, keys)
			return nil
		})
	addJSONFlag(list)

	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revokes a key at once, on every node",
		Args:  cobra.ExactArgs(1),
		RunE: withEnv(open, func(ctx context.Context, c *Env, _ *cobra.Command, args []string) error {
			k, err := policy.RevokeKey(ctx, c.Store, "", args[0])
			if ae := (*apierror.Error)(nil); errors.As(err, &ae) && ae.Code == "key_not_found" {
				return fmt.Errorf("no key with id %q", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "Revoked key %s (%s) at %s.\n", k.ID, k.Hint, tableTime(k.RevokedAt))
			return nil
		}),
	}
	cmd.AddCommand(create, list, revoke, set)
}

// Accounts sets up "switchyard accounts" on cmd, with its subcommands.
func Accounts(cmd *cobra.Command, open Opener) {

	topup := &cobra.Command{
		Use:   "topup --account NAME --usd AMOUNT [--reference REF]",
		Short: "Credits an account with $5 to $1000",
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			cents, err := usdFlag(cmd)
			if err != nil {
				return err
			}
			acct, err := accountFlag(ctx, c, cmd)
			if err != nil {
				return err
			}
			ref, _ := cmd.Flags().GetString("reference")
			if ref == "" {
				ref = "topup_" + policy.RandomBase62(20)
			}
			e, err := billing.TopUp(ctx, c.Store, c.Profile, acct.ID, cents, ref, "CLI top-up")
			if errors.Is(err, storage.ErrDuplicateReference) {
				fmt.Fprintf(c.Out, "Top-up %s was already applied; nothing changed. Balance of %s: %s.\n",
					ref, acct.Name, billing.FormatCents(e.BalanceAfterCents))
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "Credited %s to %s. Balance: %s.\n", billing.FormatCents(cents), acct.Name, billing.FormatCents(e.BalanceAfterCents))
			return nil
		}),
	}
	topup.Flags().String("account", "", "Account name")
	topup.Flags().String("usd", "", "Amount in dollars, such as 25 or 12.50")
	topup.Flags().String("reference", "", "Idempotency reference (default: a new one)")
	_ = topup.MarkFlagRequired("account")
	_ = topup.MarkFlagRequired("usd")

	show := accountCommand(open, "show --account NAME", "Shows an account's balance, keys and recent ledger entries",
		func(ctx context.Context, c *Env, acct storage.Account) error {
			balance, err := c.Store.Balance(ctx, acct.ID)
			if err != nil {
				return err
			}
			keys, err := c.Store.ListKeys(ctx, acct.ID)
			if err != nil {
				return err
			}
			entries, err := c.Store.Entries(ctx, acct.ID, 10)
			if err != nil {
				return err
			}
			active := 0
			for _, k := range keys {
				if k.Active() {
					active++
				}
			}
			fmt.Fprintf(c.Out, "Account:     %s (%s)\nCreated:     %s\nBalance:     %s\nActive keys: %d of %d\n",
				acct.Name, acct.ID, tableTime(acct.CreatedAt), billing.FormatCents(balance),
				active, c.Profile.MaxActiveKeys)
			if len(entries) > 0 {
				fmt.Fprintln(c.Out, "\nRecent ledger entries:")
				tw := tabwriter.NewWriter(c.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "WHEN\tKIND\tAMOUNT\tBALANCE\tREFERENCE")
				for _, e := range entries {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tableTime(e.CreatedAt), e.Kind,
						billing.FormatCents(e.AmountCents), billing.FormatCents(e.BalanceAfterCents), e.Reference)
				}
				_ = tw.Flush()
			}
			// Scripts parse the lines above; new lines go below them.
			charges, err := c.Store.Charges(ctx, acct.ID, 10)
			if err != nil {
				return err
			}
			if len(charges) > 0 {
				fmt.Fprintln(c.Out, "\nLast charges:")
				tw := tabwriter.NewWriter(c.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "WHEN\tAMOUNT\tREFERENCE")
				for _, e := range charges {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", tableTime(e.CreatedAt), billing.FormatCents(e.AmountCents), e.Reference)
				}
				_ = tw.Flush()
			}
			if acct.Disabled() {
				fmt.Fprintf(c.Out, "\nDisabled since %s (its keys are refused)\n", tableTime(acct.DisabledAt))
			}
			return nil
		})
	create := &cobra.Command{
		Use:   "create --account NAME [--usd AMOUNT]",
		Short: "Creates an account, with a first top-up if --usd is given",
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			name, _ := cmd.Flags().GetString("account")
			if err := policy.ValidAccountName(name); err != nil {
				return err
			}
			var cents int64
			if usd, _ := cmd.Flags().GetString("usd"); usd != "" {
				var err error
				if cents, err = usdFlag(cmd); err != nil {
					return err
				}
				if err := billing.CheckTopUp(c.Profile, cents); err != nil {
					return err
				}
			}
			if _, err := c.Store.AccountByName(ctx, name); err == nil {
				return fmt.Errorf("an account named %q already exists", name)
			} else if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			acct, err := c.Store.EnsureAccount(ctx, name)
			if err != nil {
				return err
			}
			if cents > 0 {
				if _, err := billing.TopUp(ctx, c.Store, c.Profile, acct.ID, cents, "create_"+policy.RandomBase62(20), "starting balance"); err != nil {
					return err
				}
			}
			fmt.Fprintf(c.Out, "Created account %s (%s) with %s. Create a key with: switchyard keys create --account %s\n",
				acct.Name, acct.ID, billing.FormatCents(cents), acct.Name)
			return nil
		}),
	}
	create.Flags().String("account", "", "Account name: 1 to 64 printable ASCII characters without spaces")
	create.Flags().String("usd", "", "First top-up in dollars, $5 to $1000 (default: none)")
	_ = create.MarkFlagRequired("account")

	listCmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "Lists every live account with its balance and status",
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			rows, err := c.Store.ListAccounts(ctx, "", 0)
			if err != nil {
				return err
			}
			if c.JSON {
				return printJSON(c.Out, listJSON(rows, accountJSONOf, func(r storage.AccountBalance) string { return r.Name }))
			}
			tw := tabwriter.NewWriter(c.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tBALANCE\tSTATUS\tCREATED")
			for _, r := range rows {
				status := "enabled"
				if r.Disabled() {
					status = "disabled " + tableTime(r.DisabledAt)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, billing.FormatCents(r.BalanceCents), status,
					tableTime(r.CreatedAt))
			}
			return tw.Flush()
		}),
	}
	addJSONFlag(listCmd)

	setDisabled := func(disable bool) *cobra.Command {
		verb, short := "enable", "Enables a disabled account: its keys work again"
		if disable {
			verb, short = "disable", "Disables an account: its keys are refused on every node"
		}
		return accountCommand(open, verb+" --account NAME", short, func(ctx context.Context, c *Env, acct storage.Account) error {
			a, err := policy.SetAccountDisabled(ctx, c.Store, acct.ID, disable)
			if err != nil {
				return err
			}
			if a.Disabled() {
				fmt.Fprintf(c.Out, "Account %s (%s) is disabled since %s: its keys are refused.\n", a.Name, a.ID, tableTime(a.DisabledAt))
			} else {
				fmt.Fprintf(c.Out, "Account %s (%s) is enabled.\n", a.Name, a.ID)
			}
			return nil
		})
	}
	cmd.AddCommand(create, listCmd, topup, show, setDisabled(true), setDisabled(false), alertsCommand(open), autoTopUpCommand(open))
}

// Bootstrap sets up "switchyard bootstrap" on cmd.
func Bootstrap(cmd *cobra.Command, open Opener) {
	cmd.Flags().String("account", "dev", "Account to create")
	cmd.Flags().String("usd", "10.00", "Starting balance in dollars")
	cmd.Args = cobra.NoArgs
	cmd.RunE = withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
		n, err := c.Store.CountAccounts(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintf(c.Out, "The store already has %d account(s); nothing to bootstrap. Create keys with: switchyard keys create --account NAME\n", n)
			return nil
		}
		name, _ := cmd.Flags().GetString("account")
		cents, err := usdFlag(cmd)
		if err != nil {
			return err
		}
		key, rec, err := policy.IssueKey(ctx, c.Store, c.Hasher, c.Profile, name, "bootstrap")
		if err != nil {
			return err
		}
		if _, err := billing.TopUp(ctx, c.Store, c.Profile, rec.AccountID, cents, "bootstrap", "starting balance"); err != nil &&
			!errors.Is(err, storage.ErrDuplicateReference) {
			return err
		}
		fmt.Fprintf(c.Out, "Created account %s with %s and key %s (%s). The key is shown only this once:\n",
			name, billing.FormatCents(cents), rec.ID, rec.Hint)
		fmt.Fprintln(c.Out, key)
		return nil
	})
}

func accountFlag(ctx context.Context, c *Env, cmd *cobra.Command) (storage.Account, error) {
	name, _ := cmd.Flags().GetString("account")
	acct, err := c.Store.AccountByName(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return acct, fmt.Errorf("no account named %q (accounts create --account %s creates it)", name, name)
	}
	return acct, err
}

// usdFlag reads the --usd flag, an amount in dollars, in cents.
func usdFlag(cmd *cobra.Command) (int64, error) {
	usd, _ := cmd.Flags().GetString("usd")
	cents, err := billing.ParseUSD(usd)
	if err != nil {
		return 0, fmt.Errorf("--usd %q: %v", usd, err)
	}
	return cents, nil
}

// accountCommand is a subcommand that acts on the existing account its
// required --account flag names.
func accountCommand(open Opener, use, short string, run func(ctx context.Context, c *Env, acct storage.Account) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
			acct, err := accountFlag(ctx, c, cmd)
			if err != nil {
				return err
			}
			return run(ctx, c, acct)
		}),
	}
	cmd.Flags().String("account", "", "Account name")
	_ = cmd.MarkFlagRequired("account")
	return cmd
}

func printKeys(w io.Writer, keys []storage.APIKey) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEY\tLABEL\tCREATED\tLAST USED\tSTATUS\tCONTROLS")
	for _, k := range keys {
		status := "active"
		if !k.Active() {
			status = "revoked " + tableTime(k.RevokedAt)
		}
		used := "never"
		if !k.LastUsedAt.IsZero() {
			used = tableTime(k.LastUsedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Hint, strings.ReplaceAll(k.Label, "\t", " "),
			tableTime(k.CreatedAt), used, status, describeControls(k.Controls))
	}
	_ = tw.Flush()
}
