package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/storage"
)

// Usage sets up "switchyard usage" on cmd.
func Usage(cmd *cobra.Command, open Opener) {
	cmd.Flags().String("account", "", "Account name")
	cmd.Flags().String("since", "", "First day included, YYYY-MM-DD in UTC (default: 30 days before today)")
	cmd.Flags().String("until", "", "Last day included, YYYY-MM-DD in UTC (default: today)")
	cmd.Flags().String("by", "day", "Grouping: day, key or user")
	addJSONFlag(cmd)
	_ = cmd.MarkFlagRequired("account")
	cmd.Args = cobra.NoArgs
	cmd.RunE = withEnv(open, func(ctx context.Context, c *Env, cmd *cobra.Command, _ []string) error {
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
		rows, err := c.Store.UsageSummary(ctx, acct.ID, q)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(c.Out, usageJSON(p, q.By, rows))
		}
		fmt.Fprintf(c.Out, "Usage of %s (%s) from %s to %s (UTC), by %s:\n\n", acct.Name, acct.ID,
			p.first.Format(time.DateOnly), p.last.Format(time.DateOnly), q.By)
		writeUsageTable(c.Out, q.By, rows)
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
