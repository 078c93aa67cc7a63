package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/storage"
)

// addKeyControlFlags adds the flags of a key's controls (admin.KeyControlArgs).
func addKeyControlFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("expires", "", "When the key stops working: a time such as 2030-01-31T00:00:00Z, a day such as 2030-01-31 (00:00 UTC), or from now such as 30d or 12h")
	f.StringSlice("models", nil, "Models the key may call, comma-separated (default: any)")
	f.StringSlice("allow-ip", nil, "Client addresses or ranges (CIDR) the key may be used from, comma-separated (default: any)")
	f.String("spend-limit", "", "Most the key may be charged per --spend-period, in dollars such as 1 or 12.50")
	f.String("spend-period", "", "The spend limit's period, in UTC: day or month")
	f.Int("rpm", 0, "Requests per minute, below the profile's rate (default: the profile's)")
	f.Int("streams", 0, "Concurrent streams, below the profile's limit (default: the profile's)")
}

func keyControlFlags(cmd *cobra.Command) admin.KeyControlArgs {
	f := cmd.Flags()
	var a admin.KeyControlArgs
	a.Expires, _ = f.GetString("expires")
	a.Models, _ = f.GetStringSlice("models")
	a.AllowedIPs, _ = f.GetStringSlice("allow-ip")
	a.SpendLimitUSD, _ = f.GetString("spend-limit")
	a.SpendPeriod, _ = f.GetString("spend-period")
	a.RatePerMinute, _ = f.GetInt("rpm")
	a.StreamLimit, _ = f.GetInt("streams")
	return a
}

// describeControls is a key's controls in one line, "-" for none.
func describeControls(c storage.KeyControls) string {
	var parts []string
	if !c.ExpiresAt.IsZero() {
		parts = append(parts, "expires "+tableTime(c.ExpiresAt))
	}
	if len(c.Models) > 0 {
		parts = append(parts, "models "+strings.Join(c.Models, ","))
	}
	if len(c.CIDRs) > 0 {
		parts = append(parts, "from "+strings.Join(c.CIDRs, ","))
	}
	if c.SpendLimitCents > 0 {
		parts = append(parts, billing.FormatCents(c.SpendLimitCents)+"/"+string(c.SpendPeriod))
	}
	if c.RatePerMinute > 0 {
		parts = append(parts, fmt.Sprintf("%d rpm", c.RatePerMinute))
	}
	if c.StreamLimit > 0 {
		parts = append(parts, fmt.Sprintf("%d streams", c.StreamLimit))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}
