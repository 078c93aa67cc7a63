package e2e

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// activityRow is an entry of GET /admin/accounts/{name}/activity.
type activityRow struct {
	ID               string `json:"id"`
	CreatedAt        int64  `json:"created_at"` // Unix seconds
	RequestID        string `json:"request_id"`
	KeyID            string `json:"key_id"`
	EndUser          string `json:"end_user"`
	Route            string `json:"route"`
	ModelAsked       string `json:"model_asked"`
	ModelServed      string `json:"model_served"`
	Upstream         string `json:"upstream"`
	Status           int    `json:"status"`
	ErrorCode        string `json:"error_code"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	CostCents        int64  `json:"cost_cents"`
	Estimated        bool   `json:"estimated"`
	ToolCalls        int    `json:"tool_calls"`
	Stream           bool   `json:"stream"`
	LatencyMS        *int64 `json:"latency_ms"`
	FirstByteMS      *int64 `json:"first_byte_ms"`
}

type activityList struct {
	Data    []activityRow `json:"data"`
	HasMore *bool         `json:"has_more"`
}

// waitActivity polls the account's activity until it lists n entries:
// the ledger writer appends them after the responses ended.
func waitActivity(t *testing.T, g *gateway, token, account string, n int) []activityRow {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var page activityList
		adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/"+account+"/activity?limit=1000", token, "", &page)
		if len(page.Data) >= n {
			return page.Data
		}
		if time.Now().After(deadline) {
			t.Fatalf("the request log holds %d entries after 10s, want %d", len(page.Data), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestActivityLogsEveryRequest sends charged, refused and failed requests
// and finds each in the request log with its outcome, then pages,
// filters and exports it as an account owner would.
func TestActivityLogsEveryRequest(t *testing.T) {
	up, e, key, g := fundedGateway(t, "acme")
	owner := mustCLI(t, e, "admin", "token", "--account", "acme").lastLine()
	start := time.Now().Unix()

	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: &demobackend.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}})
	if status, _, out := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "act-1", "X-User-Id", "u-7"); status != 200 {
		t.Fatalf("%d %s", status, out)
	}
	for i, id := range []string{"act-2", "act-3", "act-4"} {
		up.Enqueue(demobackend.Reply{Content: "ok", Usage: &demobackend.Usage{PromptTokens: 10 + i, CompletionTokens: 5, TotalTokens: 15 + i}})
		if status, _, out := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", id); status != 200 {
			t.Fatalf("%s: %d %s", id, status, out)
		}
	}
	if status, _, out := g.do("POST", "/v1/chat/completions", key, `{"model":"m","messages":`, "X-Request-Id", "act-bad"); status != 400 {
		t.Fatalf("a malformed body: %d %s", status, out)
	}
	// Refused before authentication: no account, no entry.
	if status, _, _ := g.do("POST", "/v1/chat/completions", "sk-not-a-key", chatBody, "X-Request-Id", "act-anon"); status != 401 {
		t.Fatalf("a bad key: %d", status)
	}

	// /v3: a stream with one tool run, the end user from the header.
	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "remember", Arguments: `{"fact":"likes tea"}`}),
		testupstream.Text("Noted."),
	)
	if status, out := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"I like tea."}]}`,
		"X-User-Id", "u-3", "X-Request-Id", "act-v3"); status != 200 {
		t.Fatalf("/v3: %d %s", status, out)
	}

	all := waitActivity(t, g, owner, "acme", 6)
	v3 := all[0]
	if v3.RequestID != "act-v3" || v3.Route != "v3_chat" || v3.Status != 200 || v3.ModelAsked != "svc-3" || v3.EndUser != "u-3" ||
		v3.ToolCalls != 1 || !v3.Stream || v3.PromptTokens == 0 || v3.FirstByteMS == nil {
		t.Errorf("the /v3 stream's entry: %+v", v3)
	}
	rows := all[1:]
	byID := map[string]activityRow{}
	for _, r := range rows {
		byID[r.RequestID] = r
	}
	if len(rows) != 5 {
		t.Errorf("%d entries before the /v3 one, want 5: %+v", len(rows), rows)
	}
	if rows[0].RequestID != "act-bad" {
		t.Errorf("newest entry %q, want act-bad first", rows[0].RequestID)
	}
	ok := byID["act-1"]
	if ok.Status != 200 || ok.ErrorCode != "" || ok.ModelAsked != "m" || ok.ModelServed != "m" || ok.EndUser != "u-7" ||
		ok.PromptTokens != 1000 || ok.CompletionTokens != 500 || ok.CostCents <= 0 || ok.Upstream == "" ||
		ok.Route != "v1" || ok.KeyID == "" || ok.LatencyMS == nil || ok.FirstByteMS == nil || ok.CreatedAt < start || ok.CreatedAt > time.Now().Unix() {
		t.Errorf("the charged request's entry: %+v", ok)
	}
	bad := byID["act-bad"]
	if bad.Status != 400 || bad.ErrorCode == "" || bad.CostCents != 0 || bad.PromptTokens != 0 {
		t.Errorf("the refused request's entry: %+v", bad)
	}
	if _, logged := byID["act-anon"]; logged {
		t.Error("an unauthenticated request was logged to an account")
	}

	// Paging: two at a time, each entry once, newest first.
	var seen []string
	after := ""
	for range 6 {
		var page activityList
		adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/activity?limit=2&after="+after, owner, "", &page)
		if page.HasMore == nil {
			t.Fatal("a page without has_more")
		}
		for _, r := range page.Data {
			seen = append(seen, r.RequestID)
		}
		if !*page.HasMore {
			break
		}
		after = page.Data[len(page.Data)-1].ID
	}
	if strings.Join(seen, " ") != "act-v3 act-bad act-4 act-3 act-2 act-1" {
		t.Errorf("pages: %v", seen)
	}

	for query, want := range map[string]string{
		"status=4xx":                      "act-bad",
		"status=200&user=u-7":             "act-1",
		"model=m&status=200&limit=1":      "act-4",
		"key=" + ok.KeyID + "&user=x":     "",
		"since=946684800&until=946771200": "",
		// Times are Unix seconds; until is excluded.
		"since=" + strconv.FormatInt(start, 10):                        "act-v3 act-bad act-4 act-3 act-2 act-1",
		"until=" + strconv.FormatInt(start, 10):                        "",
		"until=" + strconv.FormatInt(ok.CreatedAt+1, 10) + "&user=u-7": "act-1",
	} {
		var page activityList
		adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/activity?"+query, owner, "", &page)
		var ids []string
		for _, r := range page.Data {
			ids = append(ids, r.RequestID)
		}
		if strings.Join(ids, " ") != want {
			t.Errorf("?%s: %v, want %q", query, ids, want)
		}
	}
	for query, code := range map[string]string{
		"status=abc": "invalid_status", "since=May": "invalid_date", "limit=0": "invalid_limit", "format=xml": "invalid_format",
		"since=1900000000&until=1800000000": "invalid_date",
		// The RFC 3339 times and days the admin API once took.
		"since=2030-01-02T00:00:00Z": "invalid_date", "until=2030-01-02": "invalid_date",
	} {
		status, _, out := g.do("GET", "/admin/accounts/acme/activity?"+query, owner, "")
		if status != 400 || !strings.Contains(out, `"code":"`+code+`"`) {
			t.Errorf("?%s: %d %s, want 400 %s", query, status, out, code)
		}
	}

	// Another account's owner sees nothing of acme's.
	mustCLI(t, e, "accounts", "create", "--account", "other")
	other := mustCLI(t, e, "admin", "token", "--account", "other").lastLine()
	if status, _, _ := g.do("GET", "/admin/accounts/acme/activity", other, ""); status != 404 {
		t.Errorf("another account's token read acme's activity: %d", status)
	}

	// CSV: a header and one row per entry, the values of the API's.
	status, h, out := g.do("GET", "/admin/accounts/acme/activity?format=csv&status=200", owner, "")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") ||
		!strings.Contains(h.Get("Content-Disposition"), `filename="activity-acme-`) {
		t.Fatalf("CSV export: %d %v %s", status, h, out)
	}
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(records) != 6 {
		t.Fatalf("CSV export: %d records, %v\n%s", len(records), err, out)
	}
	col := map[string]int{}
	for i, name := range records[0] {
		col[name] = i
	}
	last := records[5]
	if last[col["request_id"]] != "act-1" || last[col["prompt_tokens"]] != "1000" || last[col["end_user"]] != "u-7" ||
		last[col["status"]] != "200" || last[col["id"]] != ok.ID || last[col["created_at"]] != strconv.FormatInt(ok.CreatedAt, 10) ||
		last[col["created_at_utc"]] != time.Unix(ok.CreatedAt, 0).UTC().Format("2006-01-02 15:04:05") {
		t.Errorf("CSV row of act-1: %v (columns %v)", last, records[0])
	}

	// JSON Lines: one object per line, as the API's entries.
	status, h, out = g.do("GET", "/admin/accounts/acme/activity?format=jsonl", owner, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/jsonl") || len(lines) != 6 {
		t.Fatalf("JSON Lines export: %d %q, %d lines", status, h.Get("Content-Type"), len(lines))
	}
	var first activityRow
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.RequestID != "act-v3" || first.Status != 200 || first.ToolCalls != 1 {
		t.Errorf("first JSON line %+v, %v", first, err)
	}

	// Usage by model: prompt and completion apart.
	var usage struct {
		Data []struct {
			Model            *string `json:"model"`
			Requests         int64   `json:"requests"`
			PromptTokens     int64   `json:"prompt_tokens"`
			CompletionTokens int64   `json:"completion_tokens"`
		} `json:"data"`
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/usage?by=model", owner, "", &usage)
	found := false
	for _, r := range usage.Data {
		if r.Model != nil && *r.Model == "m" {
			found = r.Requests == 4 && r.PromptTokens == 1000+10+11+12 && r.CompletionTokens == 500+15
		}
	}
	if !found || len(usage.Data) != 2 {
		t.Errorf("usage by model: %+v; want m's 4 requests and the /v3 model's row", usage.Data)
	}
}

// TestDashboardActivity runs e2e/dashboard/activity.mjs in headless
// Chromium against requests of its own: the Activity page, its filters,
// the detail view, the CSV export (its content checked) and usage by
// model.
func TestDashboardActivity(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard-activity")
	up, e, key, g := fundedGateway(t, "acme")
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--subject", "owner@acme", "--ttl", "10m").lastLine()

	up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: &demobackend.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}})
	if status, _, out := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "act-1", "X-User-Id", "u-7"); status != 200 {
		t.Fatalf("%d %s", status, out)
	}
	up.Enqueue(demobackend.Reply{Content: "ok", Usage: &demobackend.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}})
	if status, _, out := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "act-2"); status != 200 {
		t.Fatalf("%d %s", status, out)
	}
	if status, _, out := g.do("POST", "/v1/chat/completions", key, `{"model":`, "X-Request-Id", "act-bad"); status != 400 {
		t.Fatalf("%d %s", status, out)
	}
	waitActivity(t, g, owner, "acme", 3)

	runDashboardScript(t, node, "activity.mjs", artifacts, 90*time.Second,
		"DASHBOARD_URL="+g.base+"/dashboard/", "ADMIN_TOKEN="+owner, "ARTIFACTS="+artifacts)
}
