package caddymodules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

func init() {
	registerCLI(caddycmd.Command{
		Name:      "bootstrap",
		Usage:     "[--account <name>] [--usd <amount>] [--config <path> [--adapter <name>]]",
		Short:     "Creates a first account with a balance and a key when the store is empty",
		Long:      bootstrapHelp,
		CobraFunc: bootstrapCommand,
	}, "switchyard bootstrap --account dev --usd 10")
	registerCLI(caddycmd.Command{
		Name:      "accounts",
		Usage:     "create|list|show|topup|disable|enable [--config <path> [--adapter <name>]]",
		Short:     "Creates, lists, tops up, shows, disables and enables accounts",
		Long:      accountsHelp,
		CobraFunc: accountsCommand,
	}, "switchyard accounts list --json",
		"switchyard accounts create --account acme --usd 25",
		"switchyard accounts topup --account acme --usd 12.50 --reference inv-2026-001")
	registerCLI(caddycmd.Command{
		Name:      "keys",
		Usage:     "create|list|revoke [--config <path> [--adapter <name>]]",
		Short:     "Creates, lists and revokes API keys",
		Long:      keysHelp,
		CobraFunc: keysCommand,
	}, "switchyard keys create --account acme --label \"ci runner\"",
		"switchyard keys list --account acme --json",
		"switchyard keys revoke key_7PqW2m")
	registerCLI(caddycmd.Command{
		Name:      "usage",
		Usage:     "--account <name> [--since <date>] [--until <date>] [--by day|key|user] [--json] [--config <path> [--adapter <name>]]",
		Short:     "Summarises an account's usage by day, key or end user",
		Long:      usageHelp,
		CobraFunc: usageCommand,
	}, "switchyard usage --account acme --since 2026-01-01 --by key",
		"switchyard usage --account acme --json")
	registerCLI(caddycmd.Command{
		Name:      "admin",
		Usage:     "token [--account <name> | --operator] [--ttl 12h] [--subject <name>] [--config <path> [--adapter <name>]]",
		Short:     "Mints tokens for the admin API and the dashboard",
		Long:      adminHelp,
		CobraFunc: adminCommand,
	}, "switchyard admin token --account acme --ttl 1h",
		"switchyard admin token --operator --ttl 15m")
}

const keysHelp = `
Manages API keys in the store the server uses: with --config, the store named
by that config's switchyard app; otherwise the one the environment names
(SWITCHYARD_POSTGRES_URL, else SQLite in SWITCHYARD_DATA_DIR).

  switchyard keys create --account NAME [--label TEXT]
      Creates a key, and the account with a zero balance if it is new. The key
      is printed once, alone on the last line of output; only a hash is kept.
  switchyard keys list --account NAME
  switchyard keys revoke KEY_ID
      Revocation takes effect on every node at once (with PostgreSQL, as
      soon as its notification arrives: well under a millisecond).
`

const accountsHelp = `
  switchyard accounts create --account NAME [--usd AMOUNT]
      Creates an account, with a first top-up of $5 to $1000 if --usd is
      given (checked before the account is created).
  switchyard accounts list [--json]
      Every live account: id, name, balance, status, creation time.
  switchyard accounts disable --account NAME
  switchyard accounts enable --account NAME
      A disabled account's keys are refused (401) on their next request on
      every node; its balance, ledger and keys are kept, and enabling it
      makes the keys work again.
  switchyard accounts topup --account NAME --usd AMOUNT [--reference REF]
      Credits the account with $5 to $1000 (for example --usd 25 or 12.50).
      With --reference, repeating the same top-up changes nothing.
  switchyard accounts show --account NAME
      Balance, keys, recent ledger entries and the last 10 charges.
`

const usageHelp = `
Totals an account's usage records per day (UTC, by the time each request
finished), per API key or per end user: requests, prompt and completion
tokens, the amount charged, and the share of requests whose token counts
were estimated. Dates are YYYY-MM-DD in UTC and both ends are included;
--since defaults to 30 days before today, --until to today.

With --json the report is printed as the admin API answers it: an object
with since, until, by and the rows in data (see docs/billing.md,
"Reports"); otherwise as a table with a total line.
`

const bootstrapHelp = `
Prepares an empty store for a first try: creates the account (default dev)
with a balance (default $10.00) and one key, printed alone on the last line.
A store that already has accounts is left unchanged.
`

// cli is what a management command works with: the store the server uses
// and the settings it was found by.
type cli struct {
	settings settings
	store    storage.Store
	hasher   policy.KeyHasher
	out      io.Writer
	json     bool // --json: print what the admin API would answer
}

func addConfigFlags(cmd *cobra.Command) {
	cmd.PersistentFlags().StringP("config", "c", "", "Configuration file whose switchyard app names the store (default: environment)")
	cmd.PersistentFlags().StringP("adapter", "a", "", "Name of config adapter to apply")
}

// withCLI opens the store and runs f. A failure goes back to the binary's
// main, which prints every command's error in one style; an API error
// is told by its message alone, as the admin API tells it.
func withCLI(f func(ctx context.Context, c *cli, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		c, err := openCLI(ctx, cmd)
		if err == nil {
			err = f(ctx, c, cmd, args)
			if cerr := c.store.Close(); err == nil {
				err = cerr
			}
		}
		return cliError(err)
	}
}

// cliError is err as a command line reports it.
func cliError(err error) error {
	var ae *apierror.Error
	if errors.As(err, &ae) {
		return errors.New(ae.Message)
	}
	return err
}

func openCLI(ctx context.Context, cmd *cobra.Command) (*cli, error) {
	app, err := cliApp(cmd)
	if err != nil {
		return nil, err
	}
	s, err := app.resolve()
	if err != nil {
		return nil, err
	}
	if err := s.loadKeySecret(); err != nil {
		return nil, err
	}
	hasher, err := policy.NewKeyHasher(s.keySecret)
	if err != nil {
		return nil, err
	}
	store, err := openStore(ctx, s)
	if err != nil {
		return nil, err
	}
	asJSON, _ := cmd.Flags().GetBool("json")
	return &cli{settings: s, store: store, hasher: hasher, out: cmd.OutOrStdout(), json: asJSON}, nil
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

func keysCommand(cmd *cobra.Command) {
	addConfigFlags(cmd)

	create := &cobra.Command{
		Use:   "create --account NAME [--label TEXT] [controls]",
		Short: "Creates a key; prints it once, alone on the last line",
		Args:  cobra.NoArgs,
		RunE: withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
			account, _ := cmd.Flags().GetString("account")
			label, _ := cmd.Flags().GetString("label")
			controls, err := keyControlFlags(cmd).Controls(time.Now())
			if err != nil {
				return err
			}
			key, rec, err := policy.IssueKeyWith(ctx, c.store, c.hasher, c.settings.profile, account, label, controls, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.out, "Created key %s (%s) for account %s. It is shown only this once:\n", rec.ID, rec.Hint, account)
			fmt.Fprintln(c.out, key)
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
		RunE: withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, args []string) error {
			controls, err := keyControlFlags(cmd).Controls(time.Now())
			if err != nil {
				return err
			}
			k, err := policy.SetKeyControls(ctx, c.store, "", args[0], controls, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.out, "Set the controls of key %s (%s).\n", k.ID, k.Hint)
			return nil
		}),
	}
	addKeyControlFlags(set)

	list := accountCommand("list --account NAME [--json]", "Lists an account's keys, never the keys themselves",
		func(ctx context.Context, c *cli, acct storage.Account) error {
			keys, err := c.store.ListKeys(ctx, acct.ID)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(c.out, listJSON(keys, keyJSONOf))
			}
			printKeys(c.out, keys)
			return nil
		})
	addJSONFlag(list)

	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revokes a key at once, on every node",
		Args:  cobra.ExactArgs(1),
		RunE: withCLI(func(ctx context.Context, c *cli, _ *cobra.Command, args []string) error {
			k, err := policy.RevokeKey(ctx, c.store, "", args[0])
			if ae := (*apierror.Error)(nil); errors.As(err, &ae) && ae.Code == "key_not_found" {
				return fmt.Errorf("no key with id %q", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.out, "Revoked key %s (%s) at %s.\n", k.ID, k.Hint, k.RevokedAt.UTC().Format(time.RFC3339))
			return nil
		}),
	}
	cmd.AddCommand(create, list, revoke, set)
}

func accountsCommand(cmd *cobra.Command) {
	addConfigFlags(cmd)

	topup := &cobra.Command{
		Use:   "topup --account NAME --usd AMOUNT [--reference REF]",
		Short: "Credits an account with $5 to $1000",
		Args:  cobra.NoArgs,
		RunE: withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
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
			e, err := billing.TopUp(ctx, c.store, c.settings.profile, acct.ID, cents, ref, "CLI top-up")
			if errors.Is(err, storage.ErrDuplicateReference) {
				fmt.Fprintf(c.out, "Top-up %s was already applied; nothing changed. Balance of %s: %s.\n",
					ref, acct.Name, billing.FormatCents(e.BalanceAfterCents))
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.out, "Credited %s to %s. Balance: %s.\n", billing.FormatCents(cents), acct.Name, billing.FormatCents(e.BalanceAfterCents))
			return nil
		}),
	}
	topup.Flags().String("account", "", "Account name")
	topup.Flags().String("usd", "", "Amount in dollars, such as 25 or 12.50")
	topup.Flags().String("reference", "", "Idempotency reference (default: a new one)")
	_ = topup.MarkFlagRequired("account")
	_ = topup.MarkFlagRequired("usd")

	show := accountCommand("show --account NAME", "Shows an account's balance, keys and recent ledger entries",
		func(ctx context.Context, c *cli, acct storage.Account) error {
			balance, err := c.store.Balance(ctx, acct.ID)
			if err != nil {
				return err
			}
			keys, err := c.store.ListKeys(ctx, acct.ID)
			if err != nil {
				return err
			}
			entries, err := c.store.Entries(ctx, acct.ID, 10)
			if err != nil {
				return err
			}
			active := 0
			for _, k := range keys {
				if k.Active() {
					active++
				}
			}
			fmt.Fprintf(c.out, "Account:     %s (%s)\nCreated:     %s\nBalance:     %s\nActive keys: %d of %d\n",
				acct.Name, acct.ID, acct.CreatedAt.UTC().Format(time.RFC3339), billing.FormatCents(balance),
				active, c.settings.profile.MaxActiveKeys)
			if len(entries) > 0 {
				fmt.Fprintln(c.out, "\nRecent ledger entries:")
				tw := tabwriter.NewWriter(c.out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "WHEN\tKIND\tAMOUNT\tBALANCE\tREFERENCE")
				for _, e := range entries {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.CreatedAt.UTC().Format(time.RFC3339), e.Kind,
						billing.FormatCents(e.AmountCents), billing.FormatCents(e.BalanceAfterCents), e.Reference)
				}
				_ = tw.Flush()
			}
			// Scripts parse the lines above; new lines go below them.
			charges, err := c.store.Charges(ctx, acct.ID, 10)
			if err != nil {
				return err
			}
			if len(charges) > 0 {
				fmt.Fprintln(c.out, "\nLast charges:")
				tw := tabwriter.NewWriter(c.out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "WHEN\tAMOUNT\tREFERENCE")
				for _, e := range charges {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", e.CreatedAt.UTC().Format(time.RFC3339), billing.FormatCents(e.AmountCents), e.Reference)
				}
				_ = tw.Flush()
			}
			if acct.Disabled() {
				fmt.Fprintf(c.out, "\nDisabled since %s (its keys are refused)\n", acct.DisabledAt.UTC().Format(time.RFC3339))
			}
			return nil
		})
	create := &cobra.Command{
		Use:   "create --account NAME [--usd AMOUNT]",
		Short: "Creates an account, with a first top-up if --usd is given",
		Args:  cobra.NoArgs,
		RunE: withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
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
				if err := billing.CheckTopUp(c.settings.profile, cents); err != nil {
					return err
				}
			}
			if _, err := c.store.AccountByName(ctx, name); err == nil {
				return fmt.Errorf("an account named %q already exists", name)
			} else if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			acct, err := c.store.EnsureAccount(ctx, name)
			if err != nil {
				return err
			}
			if cents > 0 {
				if _, err := billing.TopUp(ctx, c.store, c.settings.profile, acct.ID, cents, "create_"+policy.RandomBase62(20), "starting balance"); err != nil {
					return err
				}
			}
			fmt.Fprintf(c.out, "Created account %s (%s) with %s. Create a key with: switchyard keys create --account %s\n",
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
		RunE: withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
			rows, err := c.store.ListAccounts(ctx, "", 0)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(c.out, listJSON(rows, accountJSONOf))
			}
			tw := tabwriter.NewWriter(c.out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tBALANCE\tSTATUS\tCREATED")
			for _, r := range rows {
				status := "enabled"
				if r.Disabled() {
					status = "disabled " + r.DisabledAt.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, billing.FormatCents(r.BalanceCents), status,
					r.CreatedAt.UTC().Format(time.RFC3339))
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
		return accountCommand(verb+" --account NAME", short, func(ctx context.Context, c *cli, acct storage.Account) error {
			a, err := policy.SetAccountDisabled(ctx, c.store, acct.ID, disable)
			if err != nil {
				return err
			}
			if a.Disabled() {
				fmt.Fprintf(c.out, "Account %s (%s) is disabled since %s: its keys are refused.\n", a.Name, a.ID, a.DisabledAt.UTC().Format(time.RFC3339))
			} else {
				fmt.Fprintf(c.out, "Account %s (%s) is enabled.\n", a.Name, a.ID)
			}
			return nil
		})
	}
	cmd.AddCommand(create, listCmd, topup, show, setDisabled(true), setDisabled(false))
}

func bootstrapCommand(cmd *cobra.Command) {
	addConfigFlags(cmd)
	cmd.Flags().String("account", "dev", "Account to create")
	cmd.Flags().String("usd", "10.00", "Starting balance in dollars")
	cmd.Args = cobra.NoArgs
	cmd.RunE = withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
		n, err := c.store.CountAccounts(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintf(c.out, "The store already has %d account(s); nothing to bootstrap. Create keys with: switchyard keys create --account NAME\n", n)
			return nil
		}
		name, _ := cmd.Flags().GetString("account")
		cents, err := usdFlag(cmd)
		if err != nil {
			return err
		}
		key, rec, err := policy.IssueKey(ctx, c.store, c.hasher, c.settings.profile, name, "bootstrap")
		if err != nil {
			return err
		}
		if _, err := billing.TopUp(ctx, c.store, c.settings.profile, rec.AccountID, cents, "bootstrap", "starting balance"); err != nil &&
			!errors.Is(err, storage.ErrDuplicateReference) {
			return err
		}
		fmt.Fprintf(c.out, "Created account %s with %s and key %s (%s). The key is shown only this once:\n",
			name, billing.FormatCents(cents), rec.ID, rec.Hint)
		fmt.Fprintln(c.out, key)
		return nil
	})
}

func accountFlag(ctx context.Context, c *cli, cmd *cobra.Command) (storage.Account, error) {
	name, _ := cmd.Flags().GetString("account")
	acct, err := c.store.AccountByName(ctx, name)
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
func accountCommand(use, short string, run func(ctx context.Context, c *cli, acct storage.Account) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
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
			status = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
		}
		used := "never"
		if !k.LastUsedAt.IsZero() {
			used = k.LastUsedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Hint, strings.ReplaceAll(k.Label, "\t", " "),
			k.CreatedAt.UTC().Format(time.RFC3339), used, status, describeControls(k.Controls))
	}
	_ = tw.Flush()
}

func usageCommand(cmd *cobra.Command) {
	addConfigFlags(cmd)
	cmd.Flags().String("account", "", "Account name")
	cmd.Flags().String("since", "", "First day included, YYYY-MM-DD in UTC (default: 30 days before today)")
	cmd.Flags().String("until", "", "Last day included, YYYY-MM-DD in UTC (default: today)")
	cmd.Flags().String("by", "day", "Grouping: day, key or user")
	addJSONFlag(cmd)
	_ = cmd.MarkFlagRequired("account")
	cmd.Args = cobra.NoArgs
	cmd.RunE = withCLI(func(ctx context.Context, c *cli, cmd *cobra.Command, _ []string) error {
		p, err := usagePeriodFlags(cmd, time.Now())
		if err != nil {
			return err
		}
		by, _ := cmd.Flags().GetString("by")
		q := storage.UsageQuery{Since: p.first, Until: p.last.AddDate(0, 0, 1), By: storage.UsageGrouping(by)}
		switch q.By {
		case storage.UsageByDay, storage.UsageByKey, storage.UsageByEndUser:
		default:
			return fmt.Errorf("--by %q: want day, key or user", by)
		}
		acct, err := accountFlag(ctx, c, cmd)
		if err != nil {
			return err
		}
		rows, err := c.store.UsageSummary(ctx, acct.ID, q)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(c.out, usageJSON(p, q.By, rows))
		}
		fmt.Fprintf(c.out, "Usage of %s (%s) from %s to %s (UTC), by %s:\n\n", acct.Name, acct.ID,
			p.first.Format(time.DateOnly), p.last.Format(time.DateOnly), q.By)
		writeUsageTable(c.out, q.By, rows)
		return nil
	})
}

// usagePeriod is the span of whole UTC days a report covers, both ends
// included.
type usagePeriod struct {
	first, last time.Time
}

// usagePeriodFlags reads --since and --until; today is the day now falls
// on in UTC.
func usagePeriodFlags(cmd *cobra.Command, now time.Time) (usagePeriod, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	p := usagePeriod{first: today.AddDate(0, 0, -30), last: today}
	for _, f := range []struct {
		name string
		day  *time.Time
	}{{"since", &p.first}, {"until", &p.last}} {
		v, _ := cmd.Flags().GetString(f.name)
		if v == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return usagePeriod{}, fmt.Errorf("--%s %q: want a date such as 2026-01-31", f.name, v)
		}
		*f.day = d
	}
	if p.last.Before(p.first) {
		return usagePeriod{}, fmt.Errorf("--until %s is before --since %s", p.last.Format(time.DateOnly), p.first.Format(time.DateOnly))
	}
	return p, nil
}

// writeUsageTable prints rows under a header, the group columns left
// and the numbers right aligned, and a total line.
func writeUsageTable(w io.Writer, by storage.UsageGrouping, rows []storage.UsageRow) {
	var head []string
	switch by {
	case storage.UsageByDay:
		head = []string{"DAY"}
	case storage.UsageByKey:
		head = []string{"KEY", "HINT"}
	default:
		head = []string{"END USER"}
	}
	groups := len(head)
	head = append(head, "REQUESTS", "PROMPT TOKENS", "COMPLETION TOKENS", "CHARGED", "ESTIMATED")
	numbers := func(r storage.UsageRow) []string {
		return []string{
			humanize.Comma(r.Requests), humanize.Comma(r.PromptTokens),
			humanize.Comma(r.CompletionTokens), billing.FormatCents(r.CostCents),
			fmt.Sprintf("%.1f%%", 100*r.EstimatedShare()),
		}
	}
	lines := [][]string{head}
	var total storage.UsageRow
	for _, r := range rows {
		var cells []string
		switch by {
		case storage.UsageByKey:
			cells = []string{r.Group, orDash(r.KeyHint)}
		case storage.UsageByEndUser:
			cells = []string{orDash(r.Group)}
		default:
			cells = []string{r.Group}
		}
		lines = append(lines, append(cells, numbers(r)...))
		total.Requests += r.Requests
		total.PromptTokens += r.PromptTokens
		total.CompletionTokens += r.CompletionTokens
		total.CostCents += r.CostCents
		total.EstimatedRequests += r.EstimatedRequests
	}
	totalLine := make([]string, groups)
	totalLine[0] = "TOTAL"
	lines = append(lines, append(totalLine, numbers(total)...))

	widths := make([]int, len(head))
	for _, l := range lines {
		for i, cell := range l {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, l := range lines {
		var b strings.Builder
		for i, cell := range l {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i < groups {
				b.WriteString(cell + pad)
			} else {
				b.WriteString(pad + cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// orDash shows an empty cell as "-" and control characters (end user
// ids come from request headers) as spaces, so that columns stay
// readable.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
