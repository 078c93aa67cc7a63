package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
)

// SearxNG searches through a self-hosted SearxNG instance
// (https://docs.searxng.org/dev/search_api.html). The instance must allow
// the JSON output format: list json under search.formats in its
// settings.yml. It is safe for concurrent use.
type SearxNG struct {
	base   *url.URL
	client *http.Client
}

// NewSearxNG returns a provider for the instance at baseURL, an absolute
// http(s) URL such as "http://127.0.0.1:8888" or "https://host/searxng/".
// A nil client means one bounded by DefaultTimeout.
func NewSearxNG(baseURL string, client *http.Client) (*SearxNG, error) {
	u, err := endpointURL("SearxNG", baseURL, "")
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("search: SearxNG URL %q: want a base URL without query or fragment", u.Redacted())
	}
	if client == nil {
		client = newClient()
	} else {
		client = guarded(client)
	}
	return &SearxNG{base: u, client: client}, nil
}

// Search asks the instance's /search endpoint for q as JSON. SearxNG
// has no result count parameter; it returns one page of merged results,
// which the tool trims.
func (s *SearxNG) Search(ctx context.Context, q Query) ([]Result, error) {
	u := s.base.JoinPath("search")
	u.RawQuery = url.Values{"q": {q.Text}, "format": {"json"}}.Encode()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("search: building the SearxNG request: %w", err)
	}
	body, err := do(ctx, s.client, req, "SearxNG", searxngStatus)
	if err != nil {
		return nil, err
	}
	return parseSearxNG(body)
}

func searxngStatus(status int, _ []byte) error {
	switch status {
	case http.StatusForbidden:
		// webapp.py aborts with 403 when the requested format is not in
		// settings.yml; the default settings enable html only.
		return &tools.CallError{Message: msgRefused, Err: errors.New(
			"SearxNG answered 403 Forbidden to format=json: the instance does not allow the JSON format; add json to search.formats in its settings.yml")}
	case http.StatusTooManyRequests:
		return &tools.CallError{Message: msgRateLimited, Err: errors.New(
			"SearxNG answered 429 Too Many Requests: its limiter (bot detection) refuses the gateway; exempt the gateway's address in limiter.toml or turn the limiter off for this instance")}
	}
	return nil
}

// searxngAnswer is the part of SearxNG's JSON answer
// (searx/webutils.py, get_json_response) that a search needs.
type searxngAnswer struct {
	Results             []json.RawMessage `json:"results"`
	UnresponsiveEngines []json.RawMessage `json:"unresponsive_engines"`
}

// searxngResult is one entry of results: a MainResult (searx/result_types)
// or a legacy dict. publishedDate is datetime.isoformat() or null.
type searxngResult struct {
	URL           text `json:"url"`
	Title         text `json:"title"`
	Content       text `json:"content"`
	PublishedDate text `json:"publishedDate"`
}

// parseSearxNG reads a SearxNG JSON answer. An answer without results
// in which engines failed is an error: the model should learn that the
// search did not happen, not that the web knows nothing.
func parseSearxNG(body []byte) ([]Result, error) {
	var a searxngAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, badAnswer("SearxNG", err)
	}
	if a.Results == nil {
		return nil, badAnswer("SearxNG", errors.New(`no "results" array`))
	}
	out := decodeEach(a.Results, func(r searxngResult) Result {
		return Result{Title: string(r.Title), URL: string(r.URL), Snippet: string(r.Content), Published: parseDate(string(r.PublishedDate))}
	})
	if len(out) == 0 && len(a.UnresponsiveEngines) > 0 {
		return nil, &tools.CallError{Message: msgUnavailable, Err: fmt.Errorf(
			"SearxNG: no results and %d engines did not answer: %s", len(a.UnresponsiveEngines), engineNames(a.UnresponsiveEngines))}
	}
	return out, nil
}

// engineNames lists unresponsive engines for the log. SearxNG writes
// each as an [engine, message] pair.
func engineNames(items []json.RawMessage) string {
	var names []string
	for _, raw := range items {
		var pair []text
		if json.Unmarshal(raw, &pair) == nil && len(pair) > 0 {
			name := string(pair[0])
			if len(pair) > 1 {
				name += " (" + string(pair[1]) + ")"
			}
			names = append(names, name)
		}
		if len(names) == 10 {
			names = append(names, "…")
			break
		}
	}
	return strings.Join(names, ", ")
}
