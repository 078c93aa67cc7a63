package cli

// KeysHelp is the long help of "switchyard keys".
const KeysHelp = `
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

// AccountsHelp is the long help of "switchyard accounts".
const AccountsHelp = `
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
  switchyard accounts alerts show --account NAME [--json]
  switchyard accounts alerts set --account NAME [--below-usd AMOUNT]
      [--below-percent N] [--key-spend-percent N] [--webhook-url URL]
      [--email ADDRESS] [--rotate-secret] [--json]
      Balance and key spend alerts, as GET and PUT .../alerts of the admin
      API: set replaces every setting, and those not given are turned off.
      A threshold needs a webhook or an email; a webhook keeps its signing
      secret while its URL stays.
`

// UsageHelp is the long help of "switchyard usage".
const UsageHelp = `
Totals an account's usage records per day (UTC, by the time each request
finished), per API key or per end user: requests, prompt and completion
tokens, the amount charged, and the share of requests whose token counts
were estimated. Dates are YYYY-MM-DD in UTC and both ends are included;
--since defaults to 30 days before today, --until to today.

With --json the report is printed as the admin API answers it: an object
with since, until, by and the rows in data (see docs/billing.md,
"Reports"); otherwise as a table with a total line.
`

// BootstrapHelp is the long help of "switchyard bootstrap".
const BootstrapHelp = `
Prepares an empty store for a first try: creates the account (default dev)
with a balance (default $10.00) and one key, printed alone on the last line.
A store that already has accounts is left unchanged.
`

// AlertsHelp is the long help of "switchyard accounts alerts".
const AlertsHelp = `
An account's balance alerts (below an amount, or below a share of the latest
top-up) and key spend alerts (a key's spend reaching a share of its spend
limit), sent as a signed webhook and, on gateways with an SMTP server, as an
email (see docs/accounts.md, "Balance alerts"). The same settings as GET and
PUT /admin/accounts/{name}/alerts; --json prints what the admin API answers.

  switchyard accounts alerts show --account NAME [--json]
      The settings, the threshold in force, whether the balance is below it,
      and the webhook's signing secret.
  switchyard accounts alerts set --account NAME [settings] [--json]
      Replaces every setting: those not given are turned off. A threshold
      needs a webhook or an email; a webhook keeps its signing secret while
      its URL stays, and --rotate-secret makes a new one.
`
