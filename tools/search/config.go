package search

import (
	"context"
	"errors"
	"net/http"

	"github.com/switchyardhq/switchyard/tools"
)

// Config selects and configures the providers. The zero value configures
// none: FromConfig then returns a nil Provider and the gateway does not
// offer web_search.
type Config struct {
	// SearxNGURL is the base URL of a SearxNG instance, absolute http or
	// https (SWITCHYARD_SEARCH_URL). Default: empty, no SearxNG.
	SearxNGURL string
	// BraveKey is a Brave Search API subscription token. Default: empty,
	// no Brave.
	BraveKey string
	// BraveURL overrides the Brave endpoint. Default: DefaultBraveURL.
	BraveURL string
	// TavilyKey is a Tavily API key. Default: empty, no Tavily.
	TavilyKey string
	// TavilyURL overrides the Tavily endpoint. Default: DefaultTavilyURL.
	TavilyURL string
	// Client sends the searches. Give it a Timeout: a provider waits as
	// long as the client and the call's context allow. Providers use a
	// copy that follows redirects only within the provider's own origin
	// (its CheckRedirect, if set, runs after that rule). Default (nil): a
	// client bounded by DefaultTimeout per request.
	Client *http.Client
}

// FromConfig returns the configured provider, or nil and no error when
// none is configured. With several, they are tried in the order SearxNG,
// Brave, Tavily: a search that fails at one goes to the next, and the
// error of the last is returned when all fail.
func FromConfig(c Config) (Provider, error) {
	var chain []Provider
	if c.SearxNGURL != "" {
		p, err := NewSearxNG(c.SearxNGURL, c.Client)
		if err != nil {
			return nil, err
		}
		chain = append(chain, p)
	}
	if c.BraveKey != "" {
		p, err := NewBrave(c.BraveKey, c.BraveURL, c.Client)
		if err != nil {
			return nil, err
		}
		chain = append(chain, p)
	}
	if c.TavilyKey != "" {
		p, err := NewTavily(c.TavilyKey, c.TavilyURL, c.Client)
		if err != nil {
			return nil, err
		}
		chain = append(chain, p)
	}
	switch len(chain) {
	case 0:
		return nil, nil
	case 1:
		return chain[0], nil
	}
	return fallback(chain), nil
}

// fallback tries its providers in order until one answers.
type fallback []Provider

func (f fallback) Search(ctx context.Context, q Query) ([]Result, error) {
	var errs []error
	for _, p := range f {
		rs, err := p.Search(ctx, q)
		if err == nil {
			return rs, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	// The model reads what went wrong last; the log gets every cause.
	msg := msgUnavailable
	var ce *tools.CallError
	if errors.As(errs[len(errs)-1], &ce) {
		msg = ce.Message
	}
	return nil, &tools.CallError{Message: msg, Err: errors.Join(errs...)}
}
