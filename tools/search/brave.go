package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
)

// DefaultBraveURL is the Brave Search API web search endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// braveMaxCount is the largest count the Brave API accepts.
const braveMaxCount = 20

// Brave searches through the Brave Search API
// (https://api-dashboard.search.brave.com/app/documentation/web-search).
// It is safe for concurrent use.
type Brave struct{ api hostedAPI }

// NewBrave returns a provider that authenticates with the subscription
// token key. An empty endpoint means DefaultBraveURL; a nil client means
// one bounded by DefaultTimeout.
func NewBrave(key, endpoint string, client *http.Client) (*Brave, error) {
	api, err := newHostedAPI("Brave", key, endpoint, DefaultBraveURL, client)
	return &Brave{api}, err
}

// Search asks for q.Count results (1 to 20; 0 means the tool's default).
func (b *Brave) Search(ctx context.Context, q Query) ([]Result, error) {
	u := *b.api.endpoint
	v := url.Values{"q": {q.Text}}
	if q.Count > 0 {
		v.Set("count", strconv.Itoa(min(q.Count, braveMaxCount)))
	}
	u.RawQuery = v.Encode()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("search: building the Brave request: %w", err)
	}
	req.Header.Set("X-Subscription-Token", b.api.key)
	body, err := do(ctx, b.api.client, req, "Brave Search", braveStatus)
	if err != nil {
		return nil, err
	}
	return parseBrave(body)
}

// braveStatus reads Brave's error object ({"type":"ErrorResponse",
// "error":{"code":..., "detail":...}}) for the log. A rejected or
// exhausted subscription is the operator's to fix, whatever the status.
func braveStatus(status int, body []byte) error {
	var e struct {
		Error struct {
			Code   text `json:"code"`
			Detail text `json:"detail"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
		return nil
	}
	code := string(e.Error.Code)
	cause := fmt.Errorf("Brave Search answered %d: %s: %.200s", status, code, e.Error.Detail)
	switch {
	case strings.Contains(code, "RATE_LIMITED"):
		return &tools.CallError{Message: msgRateLimited, Err: cause}
	case strings.Contains(code, "TOKEN") || strings.Contains(code, "SUBSCRIPTION") || strings.Contains(code, "QUOTA"):
		return &tools.CallError{Message: msgRefused, Err: cause}
	}
	return nil
}

// braveAnswer is the part of a WebSearchApiResponse a search needs:
// web.results, the page results (news, videos and the rest are other
// sections and are not asked for).
type braveAnswer struct {
	Type text `json:"type"`
	Web  *struct {
		Results []json.RawMessage `json:"results"`
	} `json:"web"`
}

// braveResult is one SearchResult. page_age is an ISO 8601 date without
// zone; age is for display ("2 days ago", "March 5, 2024") and is read
// only when page_age is missing.
type braveResult struct {
	Title       text `json:"title"`
	URL         text `json:"url"`
	Description text `json:"description"`
	PageAge     text `json:"page_age"`
	Age         text `json:"age"`
}

// parseBrave reads a Brave web search answer. An answer without a web
// section is an answer with no results: Brave leaves it out then. An
// answer of another type (an "ErrorResponse" sent with 200) is an error.
func parseBrave(body []byte) ([]Result, error) {
	var a braveAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, badAnswer("Brave Search", err)
	}
	if a.Type != "" && a.Type != "search" {
		return nil, badAnswer("Brave Search", fmt.Errorf("answer type %.40q, want \"search\"", a.Type))
	}
	if a.Web == nil {
		return []Result{}, nil
	}
	return decodeEach(a.Web.Results, func(r braveResult) Result {
		published := parseDate(string(r.PageAge))
		if published.IsZero() {
			published = parseDate(string(r.Age))
		}
		return Result{Title: string(r.Title), URL: string(r.URL), Snippet: string(r.Description), Published: published}
	}), nil
}
