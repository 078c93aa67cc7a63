package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/switchyardhq/switchyard/tools"
)

// DefaultTavilyURL is the Tavily search endpoint.
const DefaultTavilyURL = "https://api.tavily.com/search"

// tavilyMaxResults is the largest max_results Tavily accepts.
const tavilyMaxResults = 20

// Tavily searches through the Tavily Search API
// (https://docs.tavily.com/documentation/api-reference/endpoint/search).
// It is safe for concurrent use.
type Tavily struct{ api hostedAPI }

// NewTavily returns a provider that authenticates with the API key key
// (sent as a bearer token). An empty endpoint means DefaultTavilyURL; a
// nil client means one bounded by DefaultTimeout.
func NewTavily(key, endpoint string, client *http.Client) (*Tavily, error) {
	api, err := newHostedAPI("Tavily", key, endpoint, DefaultTavilyURL, client)
	return &Tavily{api}, err
}

// tavilyRequest is the body of a search. Search depth "basic" is the
// cheaper of Tavily's two; the tool wants snippets, not page extracts.
type tavilyRequest struct {
	Query       string `json:"query"`
	MaxResults  int    `json:"max_results,omitempty"`
	SearchDepth string `json:"search_depth"`
	Topic       string `json:"topic"`
}

// Search asks for q.Count results (1 to 20; 0 means Tavily's default).
func (t *Tavily) Search(ctx context.Context, q Query) ([]Result, error) {
	body, err := json.Marshal(tavilyRequest{
		Query:       q.Text,
		MaxResults:  min(q.Count, tavilyMaxResults),
		SearchDepth: "basic",
		Topic:       "general",
	})
	if err != nil {
		return nil, fmt.Errorf("search: encoding the Tavily request: %w", err)
	}
	req, err := http.NewRequest(http.MethodPost, t.api.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("search: building the Tavily request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.api.key)
	answer, err := do(ctx, t.api.client, req, "Tavily", tavilyStatus)
	if err != nil {
		return nil, err
	}
	return parseTavily(answer)
}

// tavilyStatus handles Tavily's own statuses: 432 and 433 mean the key's
// plan or pay-as-you-go limit is spent, which only the operator can fix.
func tavilyStatus(status int, _ []byte) error {
	if status == 432 || status == 433 {
		return &tools.CallError{Message: msgRefused, Err: fmt.Errorf("Tavily answered %d: the API key's usage limit is exceeded", status)}
	}
	return nil
}

type tavilyAnswer struct {
	Results []json.RawMessage `json:"results"`
}

// tavilyResult is one result; published_date is sent for the news topic
// and may be absent otherwise.
type tavilyResult struct {
	Title         text `json:"title"`
	URL           text `json:"url"`
	Content       text `json:"content"`
	PublishedDate text `json:"published_date"`
}

func parseTavily(body []byte) ([]Result, error) {
	var a tavilyAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, badAnswer("Tavily", err)
	}
	if a.Results == nil {
		return nil, badAnswer("Tavily", errors.New(`no "results" array`))
	}
	return decodeEach(a.Results, func(r tavilyResult) Result {
		return Result{Title: string(r.Title), URL: string(r.URL), Snippet: string(r.Content), Published: parseDate(string(r.PublishedDate))}
	}), nil
}
