package caddymodules

import (
	"encoding/json"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	// The access log's filters and writer, for Caddyfile.example's `log`.
	_ "github.com/switchyardhq/switchyard/caddymodules/accesslog"
	"github.com/switchyardhq/switchyard/internal/configcheck"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("switchyard", parseGlobalSwitchyard)
	httpcaddyfile.RegisterDirective("switchyard_chain", parseChain)
	httpcaddyfile.RegisterDirectiveOrder("switchyard_chain", httpcaddyfile.Before, "route")
}

// parseGlobalSwitchyard sets up the switchyard app from the global option
// block. Syntax:
//
//	switchyard {
//		revision   A|B
//		data_dir   <path>
//		postgres   <dsn>
//		redis      <url>
//		redis_prefix <prefix>
//		redis_mode single|cluster|sentinel
//		key_secret <secret>
//		key_cache_ttl <duration>
//		limits { ... }        (see unmarshalLimits)
//		ledger { ... }        (see unmarshalLedger)
//		files { ... }         (see unmarshalFiles)
//		search ...            (see unmarshalSearch)
//		open_url { ... }      (see unmarshalOpenURL)
//		tools { ... }         (see unmarshalTools)
//		upstream   <base_url> {
//			api_key <key>
//			model   <name>
//		}
//		model <name> { ... }  (see unmarshalModel; once per model)
//	}
//
// Every setting is optional; see App for the defaults.
func parseGlobalSwitchyard(d *caddyfile.Dispenser, _ any) (any, error) {
	app := new(App)
	if err := app.UnmarshalCaddyfile(d); err != nil {
		return nil, err
	}
	return httpcaddyfile.App{Name: "switchyard", Value: caddyconfig.JSON(app, nil)}, nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler.
func (a *App) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the option name
	if d.NextArg() {
		return d.ArgErr()
	}
	return blockOptions(d, 0, "switchyard", map[string]optionReader{
		"revision": checkedOption(&a.Revision, func(s string) error {
			_, err := policy.ParseRevision(s)
			return err
		}),
		"data_dir":     stringOption(&a.DataDir),
		"postgres":     checkedOption(&a.Postgres, configcheck.PostgresDSN),
		"redis":        checkedOption(&a.Redis, configcheck.URL("redis://host:6379/0", "redis", "rediss", "unix")),
		"redis_prefix": stringOption(&a.RedisPrefix),
		"redis_mode": checkedOption(&a.RedisMode, func(s string) error {
			_, err := limits.ParseRedisMode(s)
			return err
		}),
		"key_secret":    secretOption(&a.KeySecret, node.MinKeySecretBytes),
		"key_cache_ttl": a.unmarshalKeyCacheTTL,
		"limits":        subBlockOption(&a.Limits, unmarshalLimits),
		"ledger":        subBlockOption(&a.Ledger, unmarshalLedger),
		"files":         subBlockOption(&a.Files, unmarshalFiles),
		"search":        subBlockOption(&a.Search, unmarshalSearch),
		"open_url":      subBlockOption(&a.OpenURL, unmarshalOpenURL),
		"tools":         subBlockOption(&a.Tools, unmarshalTools),
		"upstream":      func(d *caddyfile.Dispenser) error { return unmarshalUpstream(d, &a.Upstream) },
		"model": func(d *caddyfile.Dispenser) error {
			m, err := unmarshalModel(d)
			if err == nil {
				a.Models = append(a.Models, m)
			}
			return err
		},
	})
}

// unmarshalKeyCacheTTL reads key_cache_ttl's duration, which may be
// negative to turn caching off.
func (a *App) unmarshalKeyCacheTTL(d *caddyfile.Dispenser) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	ttl, err := caddy.ParseDuration(v)
	if err != nil {
		return d.Errf("key_cache_ttl: %v", err)
	}
	a.KeyCacheTTL = caddy.Duration(ttl)
	return nil
}

// unmarshalUpstream reads
//
//	upstream <base_url> {
//		api_key <key>
//		model   <name>
//	}
func unmarshalUpstream(d *caddyfile.Dispenser, u *node.Upstream) error {
	if d.NextArg() {
		u.URL = d.Val()
		if err := configcheck.Literal(u.URL, configcheck.URL("http://127.0.0.1:8000/v1", "http", "https")); err != nil {
			return d.Errf("upstream: %v", err)
		}
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	return blockOptions(d, 1, "upstream", map[string]optionReader{
		"api_key": stringOption(&u.APIKey),
		"model":   stringOption(&u.Model),
	})
}

// oneArg reads exactly one argument into dst.
func oneArg(d *caddyfile.Dispenser, dst *string) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	*dst = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// optionReader reads the arguments of the block option d is on.
type optionReader func(d *caddyfile.Dispenser) error

// blockOptions reads a block whose options each read their arguments with
// the reader opts maps their name to; what names the block in the error
// for an option it does not know.
func blockOptions(d *caddyfile.Dispenser, nesting int, what string, opts map[string]optionReader) error {
	for d.NextBlock(nesting) {
		read, ok := opts[d.Val()]
		if !ok {
			return d.Errf("unrecognized %s option %q", what, d.Val())
		}
		if err := read(d); err != nil {
			return err
		}
	}
	return nil
}

// checkedOption reads an option's one argument into dst and refuses, at
// the option's line, a value check rejects.
func checkedOption(dst *string, check func(string) error) optionReader {
	return func(d *caddyfile.Dispenser) error {
		name := d.Val()
		if err := oneArg(d, dst); err != nil {
			return err
		}
		if err := configcheck.Literal(*dst, check); err != nil {
			return d.Errf("%s: %v", name, err)
		}
		return nil
	}
}

// stringOption reads an option's one argument into dst.
func stringOption(dst *string) optionReader {
	return func(d *caddyfile.Dispenser) error { return oneArg(d, dst) }
}

// secretOption reads an option's one argument, a secret of at least
// minBytes bytes, into dst. A placeholder such as {env.NAME} is checked when the
// config is provisioned, where its value is known.
func secretOption(dst *string, minBytes int) optionReader {
	return func(d *caddyfile.Dispenser) error {
		name := d.Val() // the error names the option, never the secret
		if err := oneArg(d, dst); err != nil {
			return err
		}
		if err := node.CheckLiteralSecret(*dst, minBytes); err != nil {
			return d.Errf("%s: %v", name, err)
		}
		return nil
	}
}

// positiveIntOption reads an option's one argument, a positive whole
// number, into dst.
func positiveIntOption(dst *int) optionReader {
	return func(d *caddyfile.Dispenser) error { return positiveIntArg(d, dst) }
}

// positiveDurationOption reads an option's one argument, a positive
// duration, into dst.
func positiveDurationOption[D ~int64](dst *D) optionReader {
	return func(d *caddyfile.Dispenser) error { return positiveDurationArg(d, dst) }
}

// subBlockOption reads an option that opens a block of its own with
// unmarshal, into dst.
func subBlockOption[T any](dst **T, unmarshal func(*caddyfile.Dispenser) (*T, error)) optionReader {
	return func(d *caddyfile.Dispenser) (err error) {
		*dst, err = unmarshal(d)
		return err
	}
}

// positiveDurationArg reads the one argument of the current option, a
// positive duration, into dst.
func positiveDurationArg[D ~int64](d *caddyfile.Dispenser, dst *D) error {
	opt := d.Val()
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur <= 0 {
		return d.Errf("%s: want a positive duration, not %q", opt, v)
	}
	*dst = D(dur)
	return nil
}

// positiveIntArg reads the one argument of the current option, a
// positive whole number, into dst.
func positiveIntArg(d *caddyfile.Dispenser, dst *int) error {
	opt := d.Val()
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	n, err := positiveInt(v)
	if err != nil {
		return d.Errf("%s: %v", opt, err)
	}
	*dst = n
	return nil
}

var _ caddyfile.Unmarshaler = (*App)(nil)

// optionalArg reads at most one argument into dst and refuses a block.
func optionalArg(d *caddyfile.Dispenser, dst *string) error {
	d.Next()
	if d.NextArg() {
		*dst = d.Val()
	}
	if d.NextArg() || d.NextBlock(0) {
		return d.ArgErr()
	}
	return nil
}

// noArgs reads a directive that takes neither arguments nor a block; msg
// is the error when it is given either.
func noArgs(d *caddyfile.Dispenser, msg string) error {
	d.Next()
	if d.NextArg() || d.NextBlock(0) {
		return d.Err(msg)
	}
	return nil
}

// handlerModule is *T for an HTTP handler module T whose directive's
// syntax its UnmarshalCaddyfile reads and documents.
type handlerModule[T any] interface {
	*T
	caddy.Module
	caddyhttp.MiddlewareHandler
	caddyfile.Unmarshaler
}

// registerHandler registers the HTTP handler module T and its Caddyfile
// directive, named as the module and placed pos anchor in the order of
// directives.
func registerHandler[T any, P handlerModule[T]](pos httpcaddyfile.Positional, anchor string) {
	var m P = new(T)
	caddy.RegisterModule(m)
	dir := m.CaddyModule().ID.Name()
	httpcaddyfile.RegisterHandlerDirective(dir, func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		var p P = new(T)
		err := p.UnmarshalCaddyfile(h.Dispenser)
		return p, err
	})
	httpcaddyfile.RegisterDirectiveOrder(dir, pos, anchor)
}

// parseChain reads
//
//	switchyard_chain [<matcher>] {
//		<handler> [<args...>] [{ ... }]
//		...
//	}
//
// as one route of the site: its handlers, in the order written, behind
// its matcher, compiled with the site's routes when the config loads.
// A route block would run them as a subroute, which Caddy compiles with
// the request's next handler on every request, building the chains of
// all its routes anew. A request that takes the chain is one route in
// Caddy's metrics too, labelled by its first handler. Being one route,
// its handlers take no matchers of their own: each line names an HTTP
// handler module that reads its own Caddyfile syntax (Switchyard's
// handlers, tracing), with its arguments and block.
func parseChain(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	h.Next() // the directive's name again, after the matcher's look-ahead
	if h.NextArg() {
		return nil, h.ArgErr()
	}
	var handlers []json.RawMessage
	for nesting := h.Nesting(); h.NextBlock(nesting); {
		handler, err := chainHandler(h.NewFromNextSegment())
		if err != nil {
			return nil, err
		}
		handlers = append(handlers, handler)
	}
	if len(handlers) == 0 {
		return nil, h.Err("switchyard_chain needs a block with its handlers")
	}
	route := caddyhttp.Route{HandlersRaw: handlers}
	if matcherSet != nil {
		route.MatcherSetsRaw = []caddy.ModuleMap{matcherSet}
	}
	return []httpcaddyfile.ConfigValue{{Class: "route", Value: route}}, nil
}

// chainHandler reads the handler of one line of a switchyard_chain
// block, which d holds with the line's own block, as its JSON.
func chainHandler(d *caddyfile.Dispenser) (json.RawMessage, error) {
	d.Next()
	name := d.Val()
	info, err := caddy.GetModule("http.handlers." + name)
	if err != nil {
		return nil, d.Errf("switchyard_chain: %q is not an HTTP handler", name)
	}
	handler, ok := info.New().(interface {
		caddyhttp.MiddlewareHandler
		caddyfile.Unmarshaler
	})
	if !ok {
		return nil, d.Errf("switchyard_chain: %s does not read a Caddyfile syntax of its own", name)
	}
	if d.NextArg() && isMatcherToken(d.Val()) {
		return nil, d.Errf("switchyard_chain: %s takes no matcher of its own; the chain's matcher is every handler's", name)
	}
	d.Reset() // the handler reads its line from its name on
	if err := handler.UnmarshalCaddyfile(d); err != nil {
		return nil, err
	}
	var warnings []caddyconfig.Warning
	raw := caddyconfig.JSONModuleObject(handler, "handler", name, &warnings)
	if len(warnings) > 0 {
		return nil, d.Errf("switchyard_chain: %s: %s", name, warnings[0].Message)
	}
	return raw, nil
}

// isMatcherToken reports whether a directive's first argument is a
// matcher, as Caddy reads it: a named matcher, a path, or any request.
func isMatcherToken(arg string) bool {
	return arg == "*" || strings.HasPrefix(arg, "@") || strings.HasPrefix(arg, "/")
}
