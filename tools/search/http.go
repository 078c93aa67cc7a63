package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/tools"
)

// Defaults of the providers' HTTP use.
const (
	// DefaultTimeout bounds one search, from connecting to the last byte
	// of the answer.
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes bounds a provider's answer. A page of results is
	// tens of kilobytes; more means something is wrong.
	MaxResponseBytes = 2 << 20
)

// userAgent names the gateway to search services, so that an operator
// reading their logs knows who is calling.
const userAgent = "Switchyard (+https://github.com/switchyardhq/switchyard)"

// Messages the model reads when a search fails. Each says what happened
// in words the model can act on, and never carries provider URLs or keys.
const (
	msgTimeout     = "search failed: the search service did not answer in time; answer from what you know or try a different query"
	msgUnavailable = "search failed: the search service is unavailable; answer from what you know or try again later"
	msgRateLimited = "search failed: the search service is receiving too many searches; answer from what you know or try again later"
	msgBadAnswer   = "search failed: the search service sent an answer that could not be read; answer from what you know or try a different query"
	msgRefused     = "search failed: web search is not set up correctly on this server; answer from what you know"
	msgBadQuery    = "search failed: the search service rejected the query; try a shorter or simpler query"
)

// maxRedirects bounds the redirects one search follows.
const maxRedirects = 3

// newClient returns the client providers use when given none: bounded in
// time, and without cookies, since a search needs no session.
func newClient() *http.Client {
	return guarded(&http.Client{Timeout: DefaultTimeout})
}

// guarded returns a copy of c that follows a redirect only to the origin
// (scheme, host and port) of the request it started from, and at most
// maxRedirects of them. A provider's keys travel in headers, and Go's
// client forwards every header but Authorization and cookies to any host
// (and even those to another port of the same host), so a provider, or
// whoever answers in its name, could otherwise send the key elsewhere, or
// point the gateway at an address inside its own network. c's own
// redirect policy, if any, still applies after this one. c is not
// changed.
func guarded(c *http.Client) *http.Client {
	g := *c
	next := c.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("refused redirect: more than %d redirects", maxRedirects)
		}
		if from := via[0].URL; !sameOrigin(from, req.URL) {
			return fmt.Errorf("refused redirect from %s to another origin %s", origin(from), origin(req.URL))
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &g
}

// sameOrigin reports whether a and b have the same scheme, host and port,
// a missing port being the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// origin is u's scheme://host[:port], for the log: no path, no query.
func origin(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// do sends req and returns the body of a 2xx answer. Failures come back
// as *tools.CallError with a message for the model; the cause, for the
// server log, is in Err. name names the provider in that cause.
// statusErr, when not nil, may turn a non-2xx status into a more precise
// error; returning nil keeps the generic one.
func do(ctx context.Context, c *http.Client, req *http.Request, name string, statusErr func(status int, body []byte) error) ([]byte, error) {
	req = req.WithContext(ctx)
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, transportError(ctx, name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, transportError(ctx, name, err)
	}
	if len(body) > MaxResponseBytes {
		return nil, &tools.CallError{Message: msgBadAnswer, Err: fmt.Errorf("%s: answer longer than %d bytes", name, MaxResponseBytes)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return body, nil
	}
	if statusErr != nil {
		if err := statusErr(resp.StatusCode, body); err != nil {
			return nil, err
		}
	}
	return nil, statusError(name, resp.StatusCode)
}

// statusError maps a non-2xx status to what the model can do about it.
func statusError(name string, status int) error {
	cause := fmt.Errorf("%s answered %d %s", name, status, http.StatusText(status))
	switch {
	case status == http.StatusTooManyRequests:
		return &tools.CallError{Message: msgRateLimited, Err: cause}
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusPaymentRequired:
		return &tools.CallError{Message: msgRefused, Err: cause}
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusRequestURITooLong:
		return &tools.CallError{Message: msgBadQuery, Err: cause}
	case status == http.StatusGatewayTimeout:
		return &tools.CallError{Message: msgTimeout, Err: cause}
	}
	return &tools.CallError{Message: msgUnavailable, Err: cause}
}

// transportError classifies a failure to get an answer at all.
func transportError(ctx context.Context, name string, err error) error {
	cause := fmt.Errorf("%s: %w", name, err)
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &tools.CallError{Message: msgTimeout, Err: cause}
	}
	return &tools.CallError{Message: msgUnavailable, Err: cause}
}

// badAnswer is the error of an answer that is not the provider's JSON.
func badAnswer(name string, err error) error {
	return &tools.CallError{Message: msgBadAnswer, Err: fmt.Errorf("%s: decoding the answer: %w", name, err)}
}

// hostedAPI is what a hosted search API needs: a key, an endpoint and a
// client.
type hostedAPI struct {
	key      string
	endpoint *url.URL
	client   *http.Client
}

// newHostedAPI checks key and the endpoint override (empty means def); a
// nil client means one bounded by DefaultTimeout.
func newHostedAPI(name, key, endpoint, def string, client *http.Client) (hostedAPI, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return hostedAPI{}, fmt.Errorf("search: %s: empty API key", name)
	}
	u, err := endpointURL(name, endpoint, def)
	if err != nil {
		return hostedAPI{}, err
	}
	if client == nil {
		client = newClient()
	} else {
		client = guarded(client)
	}
	return hostedAPI{key: key, endpoint: u, client: client}, nil
}

// endpointURL validates an endpoint, or returns def when it is empty.
func endpointURL(name, endpoint, def string) (*url.URL, error) {
	if strings.TrimSpace(endpoint) == "" {
		endpoint = def
	}
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil {
		return nil, fmt.Errorf("search: %s URL: %v", name, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("search: %s URL %q: want an absolute http or https URL", name, u.Redacted())
	}
	return u, nil
}
