package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/storage"
)

func TestWriteUsageTable(t *testing.T) {
	rows := []storage.UsageRow{
		{Group: "key_a", KeyHint: "sk-...a1B2", Requests: 1200, PromptTokens: 1234567, CompletionTokens: 89, CostCents: 1050},
		{Group: "key_b", Requests: 3, PromptTokens: 10, CompletionTokens: 20, CostCents: 1, EstimatedRequests: 3},
	}
	var b strings.Builder
	writeUsageTable(&b, storage.UsageByKey, rows)
	want := `KEY    HINT        REQUESTS  PROMPT TOKENS  COMPLETION TOKENS  CHARGED  ESTIMATED
key_a  sk-...a1B2     1,200      1,234,567                 89   $10.50       0.0%
key_b  -                  3             10                 20    $0.01     100.0%
TOTAL                 1,203      1,234,577                109   $10.51       0.2%
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestOrDashBlanksControlCharacters(t *testing.T) {
	if got := orDash("a\tb\x1b"); got != "a b " {
		t.Errorf("orDash = %q", got)
	}
	if got := orDash(""); got != "-" {
		t.Errorf("orDash(\"\") = %q", got)
	}
}

func TestUsagePeriodFlags(t *testing.T) {
	now := time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC)
	flags := func(since, until string) *cobra.Command {
		cmd := &cobra.Command{}
		cmd.Flags().String("since", since, "")
		cmd.Flags().String("until", until, "")
		return cmd
	}
	p, err := usagePeriodFlags(flags("", ""), now)
	if err != nil || p.first.Format(time.DateOnly) != "2026-03-01" || p.last.Format(time.DateOnly) != "2026-03-31" {
		t.Errorf("default period = %v..%v, %v; want 2026-03-01..2026-03-31", p.first, p.last, err)
	}
	if _, err := usagePeriodFlags(flags("2026-03-02", "2026-03-01"), now); err == nil {
		t.Error("until before since: no error")
	}
	if _, err := usagePeriodFlags(flags("March", ""), now); err == nil {
		t.Error("a bad date: no error")
	}
}
