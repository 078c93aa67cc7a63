package caddymodules

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("switchyard", parseGlobalSwitchyard)
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
//		key_secret <secret>
//		key_cache_ttl <duration>
//		limits { ... }        (see unmarshalLimits)
//		ledger { ... }        (see unmarshalLedger)
//		files { ... }         (see unmarshalFiles)
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
	for d.NextBlock(0) {
		switch d.Val() {
		case "revision":
			if err := oneArg(d, &a.Revision); err != nil {
				return err
			}
		case "data_dir":
			if err := oneArg(d, &a.DataDir); err != nil {
				return err
			}
		case "postgres":
			if err := oneArg(d, &a.Postgres); err != nil {
				return err
			}
		case "redis":
			if err := oneArg(d, &a.Redis); err != nil {
				return err
			}
		case "key_cache_ttl":
			var v string
			if err := oneArg(d, &v); err != nil {
				return err
			}
			ttl, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("key_cache_ttl: %v", err)
			}
			a.KeyCacheTTL = caddy.Duration(ttl)
		case "redis_prefix":
			if err := oneArg(d, &a.RedisPrefix); err != nil {
				return err
			}
		case "limits":
			lc, err := unmarshalLimits(d)
			if err != nil {
				return err
			}
			a.Limits = lc
		case "ledger":
			lc, err := unmarshalLedger(d)
			if err != nil {
				return err
			}
			a.Ledger = lc
		case "files":
			fc, err := unmarshalFiles(d)
			if err != nil {
				return err
			}
			a.Files = fc
		case "key_secret":
			if err := oneArg(d, &a.KeySecret); err != nil {
				return err
			}
		case "search":
			sc, err := unmarshalSearch(d)
			if err != nil {
				return err
			}
			a.Search = sc
		case "open_url":
			oc, err := unmarshalOpenURL(d)
			if err != nil {
				return err
			}
			a.OpenURL = oc
		case "model":
			m, err := unmarshalModel(d)
			if err != nil {
				return err
			}
			a.Models = append(a.Models, m)
		case "upstream":
			if d.NextArg() {
				a.Upstream.URL = d.Val()
			}
			if d.NextArg() {
				return d.ArgErr()
			}
			for d.NextBlock(1) {
				switch d.Val() {
				case "api_key":
					if err := oneArg(d, &a.Upstream.APIKey); err != nil {
						return err
					}
				case "model":
					if err := oneArg(d, &a.Upstream.Model); err != nil {
						return err
					}
				default:
					return d.Errf("unrecognized upstream option %q", d.Val())
				}
			}
		default:
			return d.Errf("unrecognized switchyard option %q", d.Val())
		}
	}
	return nil
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

// parseHandler sets up a handler of type T from its directive's tokens,
// which T's UnmarshalCaddyfile reads; that method documents the syntax.
func parseHandler[T any, P interface {
	*T
	caddyhttp.MiddlewareHandler
	caddyfile.Unmarshaler
}](h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	var p P = new(T)
	err := p.UnmarshalCaddyfile(h.Dispenser)
	return p, err
}
