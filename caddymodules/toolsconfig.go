package caddymodules

import (
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/tools/openurl"
)

// Environment variables of the tools. Part of the operator contract.
const (
	envSearchURL    = "SWITCHYARD_SEARCH_URL"
	envBraveKey     = "SWITCHYARD_BRAVE_API_KEY"
	envTavilyKey    = "SWITCHYARD_TAVILY_API_KEY"
	envOpenURLAllow = "SWITCHYARD_OPEN_URL_ALLOW"
)

// SearchConfig chooses the providers of the web_search tool. With none
// configured the tool is not offered. With several, a search that fails
// at one is tried at the next, in the order below.
type SearchConfig struct {
	// Base URL of a SearxNG instance with the JSON format enabled; the
	// gateway calls GET {url}/search?q=...&format=json. Default:
	// $SWITCHYARD_SEARCH_URL, else none.
	SearxNG string `json:"searxng,omitempty"`
	// Brave Search API subscription token. Default:
	// $SWITCHYARD_BRAVE_API_KEY, else none.
	BraveKey string `json:"brave_key,omitempty"`
	// Tavily API key. Default: $SWITCHYARD_TAVILY_API_KEY, else none.
	TavilyKey string `json:"tavily_key,omitempty"`
}

// OpenURLConfig tunes the open_url tool.
type OpenURLConfig struct {
	// CIDR prefixes open_url may reach although they are private or
	// loopback, on any port (intranets). Default: the comma-separated
	// list in $SWITCHYARD_OPEN_URL_ALLOW, else none: only public
	// addresses on ports 80 and 443.
	Allow []string `json:"allow,omitempty"`
}

// ToolsConfig bounds what the tools of /v3 chat completions may cost.
type ToolsConfig struct {
	// Most tool calls run from one answer of the model. Calls past it
	// are not run: each is answered to the model as an error saying so.
	// Default: 8.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`

	// Most calls of file-output tools (create_*, update_object,
	// delete_object) one account runs at once, across its concurrent
	// requests to one switchyard_chat handler on this node. A call past
	// it waits for one of them to finish, within tool_timeout. Default: 2.
	RenderConcurrency int `json:"render_concurrency,omitempty"`
}

func (c *ToolsConfig) validate() error {
	if c == nil {
		return nil
	}
	switch {
	case c.MaxToolCalls < 0:
		return fmt.Errorf("tools: max_tool_calls %d is negative", c.MaxToolCalls)
	case c.RenderConcurrency < 0:
		return fmt.Errorf("tools: render_concurrency %d is negative", c.RenderConcurrency)
	}
	return nil
}

// maxToolCalls and renderConcurrency are the settings, 0 (the
// orchestrator's default) when unset.
func (c *ToolsConfig) maxToolCalls() int {
	if c == nil {
		return 0
	}
	return c.MaxToolCalls
}

func (c *ToolsConfig) renderConcurrency() int {
	if c == nil {
		return 0
	}
	return c.RenderConcurrency
}

// unmarshalTools reads
//
//	tools {
//		max_tool_calls     <n>
//		render_concurrency <n>
//	}
func unmarshalTools(d *caddyfile.Dispenser) (*ToolsConfig, error) {
	c := new(ToolsConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	err := blockOptions(d, 1, "tools", map[string]optionReader{
		"max_tool_calls":     positiveIntOption(&c.MaxToolCalls),
		"render_concurrency": positiveIntOption(&c.RenderConcurrency),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// unmarshalSearch reads
//
//	search [<searxng-url>] {
//		searxng    <url>
//		brave_key  <key>
//		tavily_key <key>
//	}
func unmarshalSearch(d *caddyfile.Dispenser) (*SearchConfig, error) {
	c := new(SearchConfig)
	searxURL := checkURL("http://127.0.0.1:8888", "http", "https")
	if d.NextArg() {
		c.SearxNG = d.Val()
		if err := checkLiteral(c.SearxNG, searxURL); err != nil {
			return nil, d.Errf("search: %v", err)
		}
	}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	err := blockOptions(d, 1, "search", map[string]optionReader{
		"searxng":    checkedOption(&c.SearxNG, searxURL),
		"brave_key":  stringOption(&c.BraveKey),
		"tavily_key": stringOption(&c.TavilyKey),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// unmarshalOpenURL reads
//
//	open_url {
//		allow <cidr>...
//	}
func unmarshalOpenURL(d *caddyfile.Dispenser) (*OpenURLConfig, error) {
	c := new(OpenURLConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for d.NextBlock(1) {
		switch d.Val() {
		case "allow":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return nil, d.ArgErr()
			}
			for _, a := range args {
				if _, err := openurl.ParseAllow(a); err != nil && !strings.Contains(a, "{") {
					return nil, d.Errf("allow: %v", err)
				}
			}
			c.Allow = append(c.Allow, args...)
		default:
			return nil, d.Errf("unrecognized open_url option %q", d.Val())
		}
	}
	return c, nil
}

func (c *SearchConfig) resolve(repl *caddy.Replacer) (searxng, brave, tavily string) {
	if c == nil {
		c = new(SearchConfig)
	}
	return value(repl, c.SearxNG, envSearchURL), value(repl, c.BraveKey, envBraveKey), value(repl, c.TavilyKey, envTavilyKey)
}

func (c *OpenURLConfig) resolve(repl *caddy.Replacer) string {
	if c != nil && len(c.Allow) > 0 {
		var all string
		for i, a := range c.Allow {
			if i > 0 {
				all += ","
			}
			all += repl.ReplaceAll(a, "")
		}
		return all
	}
	return value(repl, "", envOpenURLAllow)
}
