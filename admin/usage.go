package admin

import (
	"math"

	"github.com/switchyardhq/switchyard/storage"
)

// UsageJSONRow is one row of a usage report in JSON, as the admin API's
// usage route and `switchyard usage --json` both write it
// (docs/billing.md, "Reports"). Exactly one of the group fields is set
// (key_id comes with key_hint), chosen by the grouping; a set field
// appears even when empty.
type UsageJSONRow struct {
	Day               *string `json:"day,omitempty"`
	KeyID             *string `json:"key_id,omitempty"`
	KeyHint           *string `json:"key_hint,omitempty"`
	EndUser           *string `json:"end_user,omitempty"`
	Model             *string `json:"model,omitempty"`
	Requests          int64   `json:"requests"`
	PromptTokens      int64   `json:"prompt_tokens"`
	CompletionTokens  int64   `json:"completion_tokens"`
	CostCents         int64   `json:"cost_cents"`
	EstimatedRequests int64   `json:"estimated_requests"`
	// EstimatedShare is rounded to four decimals, so that the output
	// does not depend on how floats print.
	EstimatedShare float64 `json:"estimated_share"`
}

// UsageJSON turns storage.UsageSummary rows grouped by by into their
// JSON rows; never nil.
func UsageJSON(by storage.UsageGrouping, rows []storage.UsageRow) []UsageJSONRow {
	out := make([]UsageJSONRow, 0, len(rows))
	for _, r := range rows {
		j := UsageJSONRow{
			Requests: r.Requests, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
			CostCents: r.CostCents, EstimatedRequests: r.EstimatedRequests,
			EstimatedShare: math.Round(r.EstimatedShare()*10_000) / 10_000,
		}
		switch by {
		case storage.UsageByDay:
			j.Day = &r.Group
		case storage.UsageByKey:
			j.KeyID, j.KeyHint = &r.Group, &r.KeyHint
		case storage.UsageByEndUser:
			j.EndUser = &r.Group
		case storage.UsageByModel:
			j.Model = &r.Group
		}
		out = append(out, j)
	}
	return out
}
