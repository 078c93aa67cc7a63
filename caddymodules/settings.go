package caddymodules

import (
	"fmt"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"

	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/routing"
)

// validating is set in a process that provisions configs only to find
// their errors (the validate and adapt commands) and never serves them.
var validating atomic.Bool

// ValidateOnly makes provisioning in this process free of side effects on
// the data dir: Caddy's Validate provisions every module but gives them no
// sign that the config will not run, so the command tells us instead.
// Secrets missing from the data dir are then made up and never written,
// and the embedded database and blob directory are created in a scratch
// directory that Cleanup removes. PostgreSQL is still connected to (and
// migrated), so that validation reports a database it cannot reach.
func ValidateOnly() { validating.Store(true) }

// expander replaces the global placeholders ({env.NAME}, {file.PATH}) of
// a config value with repl, for the Caddy-free packages' configs.
func expander(repl *caddy.Replacer) func(string) string {
	return func(s string) string { return repl.ReplaceAll(s, "") }
}

// lookup is node.Lookup over repl, for the Caddy-free packages' settings.
func lookup(repl *caddy.Replacer) func(configured, env string) string {
	return node.Lookup(expander(repl))
}

// resolve is the app's node.Settings, with the limits' and the models'
// overrides of the profile and the tools' settings. The server and the
// CLI both derive it here.
func (a *App) resolve() (node.Settings, error) {
	repl := caddy.NewReplacer()
	s, err := node.Resolve(a.Config, a.KeySecret, a.Upstream, expander(repl))
	if err != nil {
		return s, err
	}
	a.Limits.Apply(&s.Profile)
	routing.ApplyModelPrices(&s.Profile, a.Models)
	s.Search = a.Search.Config(lookup(repl))
	if s.OpenURLAllow, err = a.OpenURL.Allowed(lookup(repl)); err != nil {
		return s, fmt.Errorf("open_url allow: %v", err)
	}
	return s, nil
}
