package caddymodules

import (
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/internal/configcheck"
	"github.com/switchyardhq/switchyard/tools/openurl"
	"github.com/switchyardhq/switchyard/tools/search"
	"github.com/switchyardhq/switchyard/translator"
)

// unmarshalTools reads
//
//	tools {
//		max_tool_calls     <n>
//		render_concurrency <n>
//	}
func unmarshalTools(d *caddyfile.Dispenser) (*translator.ToolSettings, error) {
	c := new(translator.ToolSettings)
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
func unmarshalSearch(d *caddyfile.Dispenser) (*search.Settings, error) {
	c := new(search.Settings)
	searxURL := configcheck.URL("http://127.0.0.1:8888", "http", "https")
	if d.NextArg() {
		c.SearxNG = d.Val()
		if err := configcheck.Literal(c.SearxNG, searxURL); err != nil {
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
func unmarshalOpenURL(d *caddyfile.Dispenser) (*openurl.Settings, error) {
	c := new(openurl.Settings)
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
