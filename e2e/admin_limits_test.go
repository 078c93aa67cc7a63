package e2e

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dataDirBytes sums the sizes of the files below dir.
func dataDirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAdminFloodKeepsTheDiskAndLogSmall sends the real binary what grew
// its store by 78 MB and its log by 30 MB in two seconds: 300 admin
// requests with a 100 KB path segment and a genuine account token. The
// admin API's rate limit answers most of them 429 with Retry-After, what
// is recorded is clipped, and the refusals alike are written once with a
// count; the data dir and the log grow by kilobytes.
func TestAdminFloodKeepsTheDiskAndLogSmall(t *testing.T) {
	_, e := scriptedEnv(t)
	g := startGateway(t, e)
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--subject", "owner@acme", "--ttl", "10m").lastLine()
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts", operator, `{"name":"acme","usd":"5"}`, nil)
	dataDir := e["SWITCHYARD_DATA_DIR"]
	before, logBefore := dataDirBytes(t, dataDir), len(g.log.String())

	segment := strings.Repeat("a", 100_000)
	counts := map[int]int{}
	retryAfter := ""
	for range 300 {
		status, h, body := g.do("GET", "/admin/accounts/"+segment+"/keys", owner, "")
		counts[status]++
		if _, _, code := errorBody(t, body); status == http.StatusTooManyRequests {
			retryAfter = h.Get("Retry-After")
			if code != "rate_limit_exceeded" {
				t.Errorf("429 with code %q", code)
			}
		}
	}
	if counts[http.StatusNotFound]+counts[http.StatusTooManyRequests] != 300 || counts[http.StatusTooManyRequests] == 0 {
		t.Errorf("answers %v; want 404 until the token's rate limit, 429 after", counts)
	}
	if n, err := strconv.Atoi(retryAfter); err != nil || n < 1 {
		t.Errorf("Retry-After %q on the 429s", retryAfter)
	}
	// The operator's own budget is untouched, and the log is readable.
	var audit struct {
		Data []struct {
			Action, Account, Outcome, Detail string
		} `json:"data"`
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/audit", operator, "", &audit)
	var outcomes []string
	long := 0
	for _, a := range audit.Data {
		outcomes = append(outcomes, a.Action+":"+a.Outcome)
		if len(a.Account) > 1000 || len(a.Detail) > 1000 {
			long++
		}
	}
	if long > 0 {
		t.Errorf("%d audit entries hold over 1000 bytes of account or detail", long)
	}
	if !strings.Contains(strings.Join(outcomes, " "), "request:rate_limit_exceeded") {
		t.Errorf("the rate-limited requests are not in the audit log: %v", outcomes)
	}

	g.stop() // the summaries are written as the handler is cleaned up
	grown, logged := dataDirBytes(t, dataDir)-before, len(g.log.String())-logBefore
	t.Logf("answers %v: the data dir grew by %d bytes, the log by %d", counts, grown, logged)
	if grown > 2<<20 || logged > 1<<20 {
		t.Errorf("the flood grew the data dir by %d bytes and the log by %d; want at most 2 MiB and 1 MiB", grown, logged)
	}
	summaries := 0
	for _, line := range strings.Split(g.log.String(), "\n") {
		var l struct{ Detail string }
		if json.Unmarshal([]byte(line), &l) == nil && strings.Contains(l.Detail, "more like this") {
			summaries++
		}
	}
	if summaries == 0 {
		t.Error("no summary of the refusals in the log")
	}
}
