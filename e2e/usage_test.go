package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/storage"
)

// usageTotals is what a report row or a sum of records and charges says.
type usageTotals struct {
	Requests          int64 `json:"requests"`
	PromptTokens      int64 `json:"prompt_tokens"`
	CompletionTokens  int64 `json:"completion_tokens"`
	CostCents         int64 `json:"cost_cents"`
	EstimatedRequests int64 `json:"estimated_requests"`
}

func (u *usageTotals) add(o usageTotals) {
	u.Requests += o.Requests
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.CostCents += o.CostCents
	u.EstimatedRequests += o.EstimatedRequests
}

// ledgerUsage totals an account's usage records per key, each at the
// amount its ledger charge took, and returns the charges too.
func ledgerUsage(t *testing.T, e env, account string) (map[string]usageTotals, []storage.LedgerEntry) {
	t.Helper()
	settleLedgers(t)
	st := openStore(t, e)
	defer st.Close()
	ctx := context.Background()
	acct := accountNamed(t, st, account)
	records, err := st.UsageRecords(ctx, acct.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	charged := make(map[string]int64)
	all := charges(t, e, account)
	for _, c := range all {
		charged[strings.TrimPrefix(c.Reference, storage.ChargeReferencePrefix)] = -c.AmountCents
	}
	perKey := make(map[string]usageTotals)
	for _, u := range records {
		cost, ok := charged[u.RequestID]
		if !ok {
			t.Fatalf("record %s has no charge in the ledger", u.RequestID)
		}
		row := perKey[u.KeyID]
		row.add(usageTotals{Requests: 1, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CostCents: cost})
		if u.Estimated {
			row.EstimatedRequests++
		}
		perKey[u.KeyID] = row
	}
	if len(records) != len(all) {
		t.Fatalf("%d usage records but %d charges", len(records), len(all))
	}
	return perKey, all
}

// noUsageUpstream answers every chat completion without a usage object,
// so that the gateway charges an estimate.
func noUsageUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"An answer whose usage nobody counted."},"finish_reason":"stop"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestCLIUsage(t *testing.T) {
	scriptedBackends(t, func(t *testing.T, up *testupstream.Server, e env) {
		first := fundedKey(t, e, "reporter")
		second := newKey(t, e, "reporter")
		g := startGateway(t, e)
		send := func(g *gateway, key string, u *demobackend.Usage) {
			t.Helper()
			if u != nil {
				up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: u})
			}
			if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
				t.Fatalf("%d %s", status, body)
			}
		}
		send(g, first, &demobackend.Usage{PromptTokens: 120_000, CompletionTokens: 30_000, TotalTokens: 150_000})
		send(g, first, &demobackend.Usage{PromptTokens: 5_000, CompletionTokens: 0, TotalTokens: 5_000})
		send(g, second, &demobackend.Usage{PromptTokens: 40_000, CompletionTokens: 70_000, TotalTokens: 110_000})
		send(startGateway(t, e.with("SWITCHYARD_UPSTREAM", noUsageUpstream(t))), second, nil)

		perKey, ledger := ledgerUsage(t, e, "reporter")
		if len(ledger) != 4 {
			t.Fatalf("%d charges after 4 requests", len(ledger))
		}
		var want usageTotals
		for _, row := range perKey {
			want.add(row)
		}
		if want.EstimatedRequests != 1 || len(perKey) != 2 {
			t.Fatalf("the records are not what the requests should have made: %+v", perKey)
		}

		t.Run("by day as JSON", func(t *testing.T) {
			out := mustCLI(t, e, "usage", "--account", "reporter", "--by", "day", "--json").stdout
			var report struct {
				By   string `json:"by"`
				Data []struct {
					Day *string `json:"day"`
					usageTotals
					EstimatedShare float64 `json:"estimated_share"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(out), &report); err != nil || report.By != "day" {
				t.Fatalf("not the admin API's report (by %q): %v\n%s", report.By, err, out)
			}
			rows := report.Data
			// The requests ran just now; at midnight UTC they may span two days.
			today := time.Now().UTC()
			days := map[string]bool{today.Format(time.DateOnly): true, today.Add(-time.Hour).Format(time.DateOnly): true}
			var got usageTotals
			for _, r := range rows {
				if r.Day == nil || !days[*r.Day] {
					t.Errorf("row for day %v; want today (UTC)", r.Day)
				}
				if r.Requests > 0 && math.Abs(r.EstimatedShare-float64(r.EstimatedRequests)/float64(r.Requests)) > 1e-4 {
					t.Errorf("estimated_share %v for %d of %d", r.EstimatedShare, r.EstimatedRequests, r.Requests)
				}
				got.add(r.usageTotals)
			}
			if got != want {
				t.Errorf("usage by day totals %+v; the ledger and records say %+v\n%s", got, want, out)
			}
		})

		t.Run("by key as a table", func(t *testing.T) {
			out := mustCLI(t, e, "usage", "--account", "reporter", "--by", "key").stdout
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if len(lines) != 2+1+len(perKey)+1 || !strings.HasPrefix(lines[0], "Usage of reporter") {
				t.Fatalf("want a title, a blank line, a header, one row per key and a total:\n%s", out)
			}
			header := lines[2]
			rows := make(map[string]usageTotals)
			var total usageTotals
			for _, line := range lines[3:] {
				f := strings.Fields(line)
				if len(f) != len(strings.Fields("KEY HINT REQUESTS PROMPT COMPLETION CHARGED ESTIMATED")) && f[0] != "TOTAL" {
					t.Fatalf("row %q: want 7 columns", line)
				}
				nums := f[len(f)-5:]
				row := usageTotals{
					Requests:         mustInt(t, nums[0]),
					PromptTokens:     mustInt(t, nums[1]),
					CompletionTokens: mustInt(t, nums[2]),
					CostCents:        mustCents(t, nums[3]),
				}
				if len(line) != len(header) {
					t.Errorf("row %q is not as wide as the header %q: numbers are right aligned", line, header)
				}
				if f[0] == "TOTAL" {
					total = row
					continue
				}
				rows[f[0]] = row
			}
			for id, w := range perKey {
				w.EstimatedRequests = 0 // the table shows a share, not the count
				if rows[id] != w {
					t.Errorf("key %s: table says %+v; the ledger and records say %+v\n%s", id, rows[id], w, out)
				}
			}
			w := want
			w.EstimatedRequests = 0
			if total != w {
				t.Errorf("total line %+v; want %+v", total, w)
			}
			if !strings.Contains(out, "50.0%") {
				t.Errorf("one of the second key's two requests was estimated, but no row shows 50.0%%:\n%s", out)
			}
		})

		t.Run("accounts show lists the last charges", func(t *testing.T) {
			show := mustCLI(t, e, "accounts", "show", "--account", "reporter").stdout
			for _, line := range []string{"Account:     reporter", "Active keys: 2 of 25", "Recent ledger entries:"} {
				if !strings.Contains(show, line) {
					t.Errorf("the existing line %q is gone:\n%s", line, show)
				}
			}
			_, after, ok := strings.Cut(show, "\nLast charges:\n")
			if !ok || !strings.Contains(show, "Recent ledger entries:") || strings.Index(show, "Recent ledger entries:") > strings.Index(show, "Last charges:") {
				t.Fatalf("no charges section after the ledger entries:\n%s", show)
			}
			lines := strings.Split(strings.TrimRight(after, "\n"), "\n")
			if len(lines) != 1+len(ledger) {
				t.Fatalf("want a header and %d charges:\n%s", len(ledger), after)
			}
			for i, c := range ledger {
				f := strings.Fields(lines[1+i])
				if len(f) != 3 || f[1] != billing.FormatCents(c.AmountCents) || f[2] != c.Reference {
					t.Errorf("charge line %q; want %s %s", lines[1+i], billing.FormatCents(c.AmountCents), c.Reference)
				}
			}
		})

		t.Run("an empty period and refused flags", func(t *testing.T) {
			out := mustCLI(t, e, "usage", "--account", "reporter", "--since", "2020-01-01", "--until", "2020-01-31", "--json").stdout
			var report struct {
				Since, Until string
				Data         []json.RawMessage
			}
			if err := json.Unmarshal([]byte(out), &report); err != nil || report.Data == nil || len(report.Data) != 0 ||
				report.Since != "2020-01-01" || report.Until != "2020-01-31" {
				t.Errorf("a period without usage printed %q, want the period and an empty data", out)
			}
			for _, args := range [][]string{
				{"--by", "model"},
				{"--since", "01/02/2026"},
				{"--since", "2026-02-02", "--until", "2026-02-01"},
			} {
				r := cli(t, e, append([]string{"usage", "--account", "reporter"}, args...)...)
				if r.code == 0 || r.stderr == "" {
					t.Errorf("usage %v: exit %d, stderr %q; want a refusal", args, r.code, r.stderr)
				}
			}
			if r := cli(t, e, "usage", "--account", "nobody"); r.code == 0 || !strings.Contains(r.stderr, "no account") {
				t.Errorf("usage of an unknown account: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	})
}

// mustInt reads a number of the table, such as 1,234.
func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// mustCents reads billing.FormatCents's "$1.23".
func mustCents(t *testing.T, s string) int64 {
	t.Helper()
	dollars, cents, ok := strings.Cut(strings.TrimPrefix(s, "$"), ".")
	if !ok || len(cents) != 2 || !strings.HasPrefix(s, "$") {
		t.Fatalf("%q is not an amount", s)
	}
	return mustInt(t, dollars)*100 + mustInt(t, cents)
}
