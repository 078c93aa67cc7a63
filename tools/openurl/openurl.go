// Package openurl is the open_url tool: it fetches one http(s) page and
// returns its readable text as Markdown for the model.
//
// The tool reaches only the public internet. A Guard checks every
// address the tool connects to, after name resolution and on every
// redirect, and refuses loopback, private, link-local, metadata and other
// special-purpose addresses unless the operator allow-lists them
// (SWITCHYARD_OPEN_URL_ALLOW, parsed by ParseAllow). Time, redirects,
// bytes read and characters returned are bounded; see Options.
package openurl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// Defaults of Options.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultMaxBytes     = 5 << 20
	DefaultMaxRedirects = 5
	DefaultMaxChars     = 40000
	DefaultUserAgent    = "Mozilla/5.0 (compatible; Switchyard open_url)"
)

// Options configure the tool. Zero values select the defaults.
type Options struct {
	// Allow lists prefixes that may be reached although they are
	// private or loopback, on any port. Default: none.
	Allow []netip.Prefix
	// Ports are the ports allowed on public addresses. Default: 80 and
	// 443.
	Ports []uint16
	// Timeout bounds one call: connecting, redirects and reading the
	// body. Default: DefaultTimeout (15 s).
	Timeout time.Duration
	// MaxBytes bounds the body read; a longer page is cut and the model
	// told so. Default: DefaultMaxBytes (5 MiB).
	MaxBytes int64
	// MaxRedirects bounds the redirects followed. Default:
	// DefaultMaxRedirects (5). Negative: none are followed.
	MaxRedirects int
	// MaxChars bounds the Markdown returned to the model, in
	// characters; longer text is cut with a note. Default:
	// DefaultMaxChars (40,000).
	MaxChars int
	// UserAgent is sent with every request. Default: DefaultUserAgent.
	UserAgent string
	// Resolver looks up host names. Default: net.DefaultResolver.
	Resolver Resolver
}

// Tool is open_url(url). Create it with New; one Tool serves every
// request concurrently.
type Tool struct {
	timeout  time.Duration
	maxChars int
	fetcher  *fetcher
	conv     *converter.Converter
}

// New returns the tool configured by opts; zero fields take the
// defaults documented on Options.
func New(opts Options) *Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	switch {
	case opts.MaxRedirects == 0:
		opts.MaxRedirects = DefaultMaxRedirects
	case opts.MaxRedirects < 0:
		opts.MaxRedirects = 0
	}
	if opts.MaxChars <= 0 {
		opts.MaxChars = DefaultMaxChars
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	return &Tool{
		timeout:  opts.Timeout,
		maxChars: opts.MaxChars,
		fetcher:  newFetcher(opts),
		conv:     newConverter(),
	}
}

var (
	_ tools.Tool    = (*Tool)(nil)
	_ tools.Labeler = (*Tool)(nil)
)

// Name returns tools.NameOpenURL.
func (t *Tool) Name() string { return tools.NameOpenURL }

// Description tells the model what the tool is for.
func (t *Tool) Description() string {
	return "Open one web page by its http or https URL and read its main text as Markdown. " +
		"Use it for a link the user gave or a search result worth reading in full. " +
		"Only public pages can be opened."
}

// Schema returns the public argument schema.
func (t *Tool) Schema() json.RawMessage { return tools.Schemas[tools.NameOpenURL] }

// Label returns "Reading <host>", or "" when the arguments hold no URL
// with a host, so that the default label is used.
func (t *Tool) Label(args json.RawMessage) string {
	var a arguments
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || u.Hostname() == "" {
		return ""
	}
	host, _ := cutRunes(u.Hostname(), 100)
	return "Reading " + host
}

type arguments struct {
	URL string `json:"url"`
}

// Execute fetches the page and returns its text. Every failure the model
// can act on is a *tools.CallError.
func (t *Tool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var args arguments
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return tools.Result{}, tools.Failf(`arguments must be a JSON object {"url": string}`)
	}
	u, err := checkURL(args.URL, t.fetcher.guard)
	if err != nil {
		return tools.Result{}, err
	}
	if call.Env != nil && call.Env.SearchOff && !userGave(u, call.Env.Links) {
		return tools.Result{}, tools.Failf("refused: web search is off, so only links the user wrote in the conversation can be opened, and this URL is not one of them")
	}

	fetchLabel := "Fetching " + u.Hostname()
	call.ReportStep(wire.Step{SID: "fetch", Label: fetchLabel, Status: wire.StepActive})
	fetchCtx, cancel := context.WithTimeoutCause(ctx, t.timeout, errFetchTimeout)
	defer cancel()
	p, err := t.fetcher.fetch(fetchCtx, u)
	if err != nil {
		call.ReportStep(wire.Step{SID: "fetch", Label: fetchLabel, Status: wire.StepError, Detail: detail(err)})
		return tools.Result{}, err
	}
	call.ReportStep(wire.Step{SID: "fetch", Label: fetchLabel, Status: wire.StepDone})

	call.ReportStep(wire.Step{SID: "extract", Label: "Extracting the text", Status: wire.StepActive})
	ex, err := t.extractWithin(fetchCtx, p)
	if err == nil && ex.markdown == "" {
		err = tools.Failf("the page has no readable text")
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		} else if errors.Is(err, errFetchTimeout) {
			err = &tools.CallError{Message: "the page took too long to read", Err: err}
		} else if ce := (*tools.CallError)(nil); !errors.As(err, &ce) {
			err = &tools.CallError{Message: "the page could not be read", Err: err}
		}
		call.ReportStep(wire.Step{SID: "extract", Label: "Extracting the text", Status: wire.StepError, Detail: detail(err)})
		return tools.Result{}, err
	}
	data, _ := cutRunes(ex.markdown, wire.MaxStepDataChars)
	call.ReportData(wire.StepData{SID: "extract", Label: ex.title, Content: data})
	call.ReportStep(wire.Step{SID: "extract", Label: "Extracting the text", Status: wire.StepDone})

	final := p.url.String()
	return tools.Result{
		Content: fmt.Sprintf("# %s\n\nSource: %s\n\n%s", ex.title, final, t.bound(ex.markdown, p.cut)),
		Sources: []wire.Source{{Title: ex.title, URL: final}},
	}, nil
}

// extractGoroutine names the extraction's goroutine as internal/guard
// counts its panics.
var extractGoroutine = guard.Name("open_url_extract")

// extractWithin runs extract but returns when ctx is done: parsing a
// large page can take seconds, and the time limit covers the whole call.
// The abandoned extraction ends by itself, its input being bounded.
func (t *Tool) extractWithin(ctx context.Context, p page) (extraction, error) {
	type outcome struct {
		ex  extraction
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		// A parser that panics on a page fails this call (the model is
		// told the page could not be read), not the process.
		if err := guard.Run(extractGoroutine, func() { o.ex, o.err = extract(ctx, t.conv, p) }); err != nil {
			o = outcome{err: err}
		}
		done <- o
	}()
	select {
	case o := <-done:
		return o.ex, o.err
	case <-ctx.Done():
		return extraction{}, context.Cause(ctx)
	}
}

// bound cuts the Markdown to the character budget and says what was cut,
// so the model does not take a partial page for the whole.
func (t *Tool) bound(md string, bodyCut bool) string {
	md, cut := cutRunes(md, t.maxChars)
	var notes []string
	if bodyCut {
		notes = append(notes, fmt.Sprintf("only the first %s of the page were read", byteSize(t.fetcher.maxBytes)))
	}
	if cut {
		notes = append(notes, fmt.Sprintf("the text was cut after %d characters", t.maxChars))
	}
	if len(notes) == 0 {
		return md
	}
	return md + "\n\n[The page is longer than shown: " + strings.Join(notes, "; ") + ".]"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// detail is the text of a failed step row: what the model is told,
// without its "error: " prefix.
func detail(err error) string {
	return strings.TrimPrefix(tools.ModelMessage(err), "error: ")
}
