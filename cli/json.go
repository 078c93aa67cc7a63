package cli

import (
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/storage"
)

// The commands' --json output has the admin API's shapes (docs/admin.md),
// so that a script moves between the two unchanged. A listing is the
// admin API's list object (docs/admin.md, "Lists") with has_more false:
// the command lists everything.

func addJSONFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("json", false, "Print what the admin API answers for this listing, as JSON")
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type cliList[T any] struct {
	Object  string  `json:"object"`
	Data    []T     `json:"data"`
	HasMore bool    `json:"has_more"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
}

// listJSON lists items whole; cursor names an item as the admin API's
// after takes it, for first_id and last_id.
func listJSON[T, J any](items []T, toJSON func(T) J, cursor func(T) string) cliList[J] {
	out := cliList[J]{Object: "list", Data: make([]J, 0, len(items))}
	for _, it := range items {
		out.Data = append(out.Data, toJSON(it))
	}
	if n := len(items); n > 0 {
		first, last := cursor(items[0]), cursor(items[n-1])
		out.FirstID, out.LastID = &first, &last
	}
	return out
}

// tableTime is t as the commands' tables show it, for people: UTC.
func tableTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// accountJSON is GET /admin/accounts/{name} but for reserved_cents: the
// holds of requests in flight live in the servers, not in the store.
type accountJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	BalanceCents int64  `json:"balance_cents"`
	CreatedAt    int64  `json:"created_at"`
	Disabled     bool   `json:"disabled"`
	DisabledAt   *int64 `json:"disabled_at"`
}

func accountJSONOf(r storage.AccountBalance) accountJSON {
	out := accountJSON{ID: r.ID, Name: r.Name, BalanceCents: r.BalanceCents, Disabled: r.Disabled(),
		CreatedAt: r.CreatedAt.Unix()}
	if r.Disabled() {
		out.DisabledAt = admin.UnixTimeOrNull(r.DisabledAt)
	}
	return out
}

// usageReportJSON is GET /admin/accounts/{name}/usage.
type usageReportJSON struct {
	Since   string               `json:"since"`
	Until   string               `json:"until"`
	By      string               `json:"by"`
	Data    []admin.UsageJSONRow `json:"data"`
	HasMore bool                 `json:"has_more"`
}

func usageJSON(p usagePeriod, by storage.UsageGrouping, rows []storage.UsageRow) usageReportJSON {
	return usageReportJSON{Since: p.first.Format(time.DateOnly), Until: p.last.Format(time.DateOnly), By: string(by),
		Data: admin.UsageJSON(by, rows)}
}
