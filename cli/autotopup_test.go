package cli

import (
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
)

func TestAutoTopUpFlags(t *testing.T) {
	cmd, _, err := autoTopUpCommand(nil).Find([]string{"set"})
	if err != nil || cmd.Name() != "set" {
		t.Fatalf("no set subcommand: %v", err)
	}
	if err := cmd.ParseFlags([]string{"--enabled", "--threshold-usd", "5", "--amount-usd", "20.50"}); err != nil {
		t.Fatal(err)
	}
	in := autoTopUpFlags(cmd)
	if !in.Enabled || in.ThresholdUSD == nil || *in.ThresholdUSD != "5" || in.AmountUSD == nil || *in.AmountUSD != "20.50" ||
		in.ThresholdCents != nil || in.AmountCents != nil {
		t.Fatalf("read %+v", in)
	}
	cmd, _, _ = autoTopUpCommand(nil).Find([]string{"set"})
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if in := autoTopUpFlags(cmd); in.Enabled || in.ThresholdUSD != nil || in.AmountUSD != nil {
		t.Fatalf("no flags read as %+v", in)
	}
}

func TestWriteAutoTopUp(t *testing.T) {
	acct := storage.Account{ID: "acct_1", Name: "acme"}
	var b strings.Builder
	writeAutoTopUp(&b, acct, storage.AutoTopUp{Enabled: true, ThresholdCents: 500, AmountCents: 2000, PaymentMethodID: "pm_1",
		Failures: 1, LastError: "card_declined: Your card was declined."})
	want := `Auto top-up of account acme (acct_1)
State:              on
Threshold:          $5.00
Amount:             $20.00
Card saved:         yes
Attempt in flight:  no
Failures in a row:  1 of 3
Last failure:       card_declined: Your card was declined.
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
