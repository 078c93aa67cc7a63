// Package search is the web_search tool: the Tool the upstream model
// calls, the Provider contract it searches through, and the providers
// (SearxNG, Brave Search, Tavily). Provider results are normalised here,
// once, so every provider gives the model the same shape of answer:
// plain-text titles and snippets of bounded length, http(s) URLs only, no
// duplicates, in the provider's order.
//
// A gateway builds a Provider with FromConfig and wraps it with New. When
// nothing is configured FromConfig returns a nil Provider, and the tool
// is not offered at all.
package search

import (
	"context"
	"time"
)

// Provider is a web search service. Implementations are safe for
// concurrent use.
type Provider interface {
	// Search returns results for q, best first. No results is an empty
	// list, not an error. Errors the model should read are
	// *tools.CallError values; Search returns when ctx is done.
	Search(ctx context.Context, q Query) ([]Result, error)
}

// Query is one search.
type Query struct {
	// Text is what to search for, as the model wrote it.
	Text string
	// Count is how many results the caller wants. Providers that let the
	// caller choose ask for this many; others return what they have and
	// the caller trims. Zero means the provider's default.
	Count int
}

// Result is one search hit as the provider returned it. Title and
// Snippet may hold HTML until normalised.
type Result struct {
	Title   string
	URL     string
	Snippet string
	// Published is when the page was published or last changed; the
	// zero time when the provider does not say.
	Published time.Time
}
