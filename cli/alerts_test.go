package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/storage"
)

func TestAlertFlagsLeaveOutWhatIsNotGiven(t *testing.T) {
	parse := func(args ...string) (cmdIn func() error, cmd *cobra.Command) {
		cmd, _, err := alertsCommand(nil).Find([]string{"set"})
		if err != nil || cmd.Name() != "set" {
			t.Fatalf("no set subcommand: %v", err)
		}
		return func() error { return cmd.ParseFlags(args) }, cmd
	}
	// A flag given as 0 is kept as 0, for the API to refuse, rather than
	// taken for "off".
	run, cmd := parse("--below-usd", "10", "--key-spend-percent", "0", "--webhook-url", "https://h.example/x")
	if err := run(); err != nil {
		t.Fatal(err)
	}
	in, err := alertFlags(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if in.BelowUSD == nil || *in.BelowUSD != "10" || in.BelowPercent != nil || in.KeySpend == nil || *in.KeySpend != 0 ||
		in.WebhookURL != "https://h.example/x" || in.Email != "" || in.RotateSecret {
		t.Fatalf("read %+v", in)
	}
	run, cmd = parse()
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if in, _ := alertFlags(cmd); in.BelowUSD != nil || in.BelowPercent != nil || in.KeySpend != nil || in.WebhookURL != "" {
		t.Fatalf("no flags read as %+v", in)
	}
}

func TestWriteAlerts(t *testing.T) {
	below, share := int64(1000), int64(80)
	acct := storage.Account{ID: "acct_1", Name: "acme"}
	var b strings.Builder
	writeAlerts(&b, acct, storage.AlertSettings{BelowCents: &below, KeySpendPercent: &share,
		WebhookURL: "https://h.example/x", WebhookSecret: "whsec_abc", FiredAt: time.Date(2026, 11, 27, 15, 4, 5, 0, time.UTC)})
	want := `Alerts of account acme (acct_1)
Below amount:       $10.00
Below share:        off
Threshold:          $10.00
Balance below it:   yes, since 2026-11-27T15:04:05Z
Key spend share:    80% of a key's spend limit
Webhook:            https://h.example/x
Webhook secret:     whsec_abc
Email:              off
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	writeAlerts(&b, acct, storage.AlertSettings{})
	if got := b.String(); strings.Count(got, ": ") != 7 || strings.Count(got, "off") != 7 || strings.Contains(got, "secret") {
		t.Errorf("no settings:\n%s", got)
	}
}
