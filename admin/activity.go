package admin

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// activityJSON is one request of the request log, as GET .../activity
// lists it and its JSON Lines export writes it.
type activityJSON struct {
	ID               string `json:"id"`
	CreatedAt        int64  `json:"created_at"`
	RequestID        string `json:"request_id"`
	KeyID            string `json:"key_id"`
	EndUser          string `json:"end_user"`
	Route            string `json:"route"`
	Method           string `json:"method"`
	Path             string `json:"path"`
	ModelAsked       string `json:"model_asked"`
	ModelServed      string `json:"model_served"`
	Upstream         string `json:"upstream"`
	Stream           bool   `json:"stream"`
	Status           int    `json:"status"`
	ErrorCode        string `json:"error_code"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	CostCents        int64  `json:"cost_cents"`
	Estimated        bool   `json:"estimated"`
	ToolCalls        int    `json:"tool_calls"`
	LatencyMS        int64  `json:"latency_ms"`
	// FirstByteMS is null for a response without a body.
	FirstByteMS *int64 `json:"first_byte_ms"`
}

func activityOut(e storage.RequestLogEntry) activityJSON {
	out := activityJSON{
		ID: e.ID, CreatedAt: unixTime(e.At), RequestID: e.RequestID, KeyID: e.KeyID, EndUser: e.EndUser,
		Route: e.Route, Method: e.Method, Path: e.Path, ModelAsked: e.ModelAsked, ModelServed: e.ModelServed,
		Upstream: e.Upstream, Stream: e.Stream, Status: e.Status, ErrorCode: e.ErrorCode,
		PromptTokens: e.PromptTokens, CompletionTokens: e.CompletionTokens, CostCents: e.CostCents,
		Estimated: e.Estimated, ToolCalls: e.ToolCalls, LatencyMS: e.Latency.Milliseconds(),
	}
	if e.FirstByte > 0 {
		ms := e.FirstByte.Milliseconds()
		out.FirstByteMS = &ms
	}
	return out
}

// Export bounds: an export pages through the log in exportPage rows and
// stops after exportMost, which the response says in a trailer-less way:
// X-Export-Truncated: true.
const (
	exportPage = 1000
	exportMost = 100_000
)

// activity: GET .../activity?limit=&after=&key=&model=&status=&user=
// &since=&until=&format=, the account's requests newest first. format
// json (the default) answers a page; csv and jsonl answer every entry
// the filters select, as a download.
func (q *request) activity(a storage.Account) {
	filter, err := activityQuery(q.r)
	if err != nil {
		q.fail(err)
		return
	}
	switch format := q.r.URL.Query().Get("format"); format {
	case "", "json":
		// Request log ids start with their time, so an id is its own
		// cursor whether or not its entry was pruned since.
		p, err := pageParams(q.r, hasPrefixID("rq_"))
		if err != nil {
			q.fail(err)
			return
		}
		filter.Before, filter.Limit = p.after, p.limit+1
		entries, err := q.h.cfg.Store.RequestLogPage(q.ctx, a.ID, filter)
		if err != nil {
			q.fail(err)
			return
		}
		entries, more := trim(entries, p.limit)
		q.reply(http.StatusOK, pageEach(entries, more, activityOut, func(e storage.RequestLogEntry) string { return e.ID }))
	case "csv", "jsonl":
		q.exportActivity(a, filter, format)
	default:
		q.fail(apierror.InvalidRequest("invalid_format", "format is json, csv or jsonl."))
	}
}

// activityQuery reads the filters of GET .../activity. since and until
// are Unix seconds and bound the entries' times to [since, until).
func activityQuery(r *http.Request) (storage.RequestLogQuery, error) {
	v := r.URL.Query()
	f := storage.RequestLogQuery{KeyID: v.Get("key"), Model: v.Get("model"), EndUser: v.Get("user")}
	if s := v.Get("status"); s != "" {
		switch {
		case len(s) == 3 && s[0] >= '1' && s[0] <= '5' && strings.EqualFold(s[1:], "xx"):
			f.StatusClass = int(s[0] - '0')
		default:
			n, err := strconv.Atoi(s)
			if err != nil || n < 100 || n > 599 {
				return f, apierror.InvalidRequest("invalid_status", "status is a status code such as 429, or a class such as 4xx.")
			}
			f.Status = n
		}
	}
	var err error
	if f.Since, err = timeParam(v, "since", "invalid_date"); err != nil {
		return f, err
	}
	if f.Until, err = timeParam(v, "until", "invalid_date"); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return f, apierror.InvalidRequest("invalid_date", "until is not after since.")
	}
	return f, nil
}

// csvHeader is the first line of a CSV export; the columns follow
// activityJSON, then created_at_utc.
var csvHeader = []string{"id", "created_at", "request_id", "key_id", "end_user", "route", "method", "path",
	"model_asked", "model_served", "upstream", "stream", "status", "error_code", "prompt_tokens",
	"completion_tokens", "cost_cents", "estimated", "tool_calls", "latency_ms", "first_byte_ms", "created_at_utc"}

// csvHumanTime is the format of the CSV's created_at_utc column: the
// entry's time in UTC as spreadsheets read a date and time, for people;
// created_at is the same instant in Unix seconds, for programs.
const csvHumanTime = "2006-01-02 15:04:05"

func csvRow(j activityJSON) []string {
	firstByte := ""
	if j.FirstByteMS != nil {
		firstByte = strconv.FormatInt(*j.FirstByteMS, 10)
	}
	return []string{j.ID, strconv.FormatInt(j.CreatedAt, 10), j.RequestID, j.KeyID, csvText(j.EndUser), j.Route, j.Method, csvText(j.Path),
		csvText(j.ModelAsked), csvText(j.ModelServed), j.Upstream, strconv.FormatBool(j.Stream), strconv.Itoa(j.Status),
		j.ErrorCode, strconv.FormatInt(j.PromptTokens, 10), strconv.FormatInt(j.CompletionTokens, 10),
		strconv.FormatInt(j.CostCents, 10), strconv.FormatBool(j.Estimated), strconv.Itoa(j.ToolCalls),
		strconv.FormatInt(j.LatencyMS, 10), firstByte, time.Unix(j.CreatedAt, 0).UTC().Format(csvHumanTime)}
}

// csvText keeps a value a client chose from being read as a formula by
// a spreadsheet that opens the export.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// exportActivity writes every entry filter selects, newest first, as CSV
// or JSON Lines. The status is sent before the first page is read, so a
// store that fails midway ends the download short; the error is logged.
func (q *request) exportActivity(a storage.Account, filter storage.RequestLogQuery, format string) {
	filter.Limit = exportPage
	first, err := q.h.cfg.Store.RequestLogPage(q.ctx, a.ID, filter)
	if err != nil {
		q.fail(err)
		return
	}
	h := q.w.Header()
	name := "activity-" + a.Name + "-" + q.h.cfg.Now().UTC().Format("20060102T150405Z")
	if format == "csv" {
		h.Set("Content-Type", "text/csv; charset=utf-8")
		name += ".csv"
	} else {
		h.Set("Content-Type", "application/jsonl; charset=utf-8")
		name += ".jsonl"
	}
	h.Set("Content-Disposition", `attachment; filename="`+safeFilename(name)+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	q.w.WriteHeader(http.StatusOK)

	cw := csv.NewWriter(q.w)
	enc := json.NewEncoder(q.w)
	if format == "csv" {
		_ = cw.Write(csvHeader)
	}
	written := 0
	for page := first; ; {
		for _, e := range page {
			j := activityOut(e)
			if format == "csv" {
				_ = cw.Write(csvRow(j))
			} else if err := enc.Encode(j); err != nil {
				return
			}
		}
		written += len(page)
		if len(page) < exportPage || written >= exportMost {
			break
		}
		filter.Before = page[len(page)-1].ID
		page, err = q.h.cfg.Store.RequestLogPage(q.ctx, a.ID, filter)
		if err != nil {
			q.h.cfg.Logger.Error("request log export ended early", zap.String("account", a.Name), zap.Error(err))
			break
		}
	}
	cw.Flush()
}

// safeFilename keeps the characters of an account name that are safe in
// a Content-Disposition header.
func safeFilename(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
