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
		var err error
		switch d.Val() {
		case "revision":
			err = oneArg(d, &a.Revision)
		case "data_dir":
			err = oneArg(d, &a.DataDir)
		case "postgres":
			err = oneArg(d, &a.Postgres)
		case "redis":
			err = oneArg(d, &a.Redis)
		case "key_cache_ttl":
			var v string
			if err = oneArg(d, &v); err != nil {
				break
			}
			ttl, perr := caddy.ParseDuration(v)
			if perr != nil {
				return d.Errf("key_cache_ttl: %v", perr)
			}
			a.KeyCacheTTL = caddy.Duration(ttl)
		case "redis_prefix":
			err = oneArg(d, &a.RedisPrefix)
		case "limits":
			a.Limits, err = unmarshalLimits(d)
		case "ledger":
			a.Ledger, err = unmarshalLedger(d)
		case "files":
			a.Files, err = unmarshalFiles(d)
		case "key_secret":
			err = oneArg(d, &a.KeySecret)
		case "search":
			a.Search, err = unmarshalSearch(d)
		case "open_url":
			a.OpenURL, err = unmarshalOpenURL(d)
		case "model":
			var m *Model
			if m, err = unmarshalModel(d); err == nil {
				a.Models = append(a.Models, m)
			}
		case "upstream":
			err = a.Upstream.unmarshalCaddyfile(d)
		default:
			return d.Errf("unrecognized switchyard option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unmarshalCaddyfile reads
//
//	upstream <base_url> {
//		api_key <key>
//		model   <name>
//	}
func (u *Upstream) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		u.URL = d.Val()
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	return stringOptions(d, 1, "upstream", map[string]*string{
		"api_key": &u.APIKey,
		"model":   &u.Model,
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

// stringOptions reads a block whose options each take one argument,
// each into the string opts maps its name to; what names the block in
// the error for an option it does not know.
func stringOptions(d *caddyfile.Dispenser, nesting int, what string, opts map[string]*string) error {
	for d.NextBlock(nesting) {
		dst, ok := opts[d.Val()]
		if !ok {
			return d.Errf("unrecognized %s option %q", what, d.Val())
		}
		if err := oneArg(d, dst); err != nil {
			return err
		}
	}
	return nil
}

// positiveDurationArg reads the one argument of the current option, a
// positive duration, into dst.
func positiveDurationArg(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	opt := d.Val()
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur <= 0 {
		return d.Errf("%s: want a positive duration, not %q", opt, v)
	}
	*dst = caddy.Duration(dur)
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
