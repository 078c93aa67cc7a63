// Package configcheck holds the checks of Caddyfile values that need no
// Caddy: the Caddyfile readers run them at adapt, where an error can name
// its file and line.
package configcheck

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Literal runs check on a value written out in the Caddyfile. A value
// with a placeholder such as {env.NAME} passes: it is checked when the
// config is provisioned, where its value is known.
func Literal(v string, check func(string) error) error {
	if strings.Contains(v, "{") {
		return nil
	}
	return check(v)
}

// URL accepts an absolute URL with one of schemes. The message never
// repeats the value: database and Redis URLs carry passwords.
func URL(example string, schemes ...string) func(string) error {
	return func(s string) error {
		u, err := url.Parse(s)
		if err != nil || !slices.Contains(schemes, strings.ToLower(u.Scheme)) || (u.Host == "" && u.Scheme != "unix") {
			return fmt.Errorf("want a %s URL such as %s", strings.Join(schemes, ", "), example)
		}
		return nil
	}
}

// PostgresDSN accepts the two forms pgx reads: a postgres:// URL or
// keyword=value pairs.
func PostgresDSN(s string) error {
	if !strings.Contains(s, "://") && strings.Contains(s, "=") {
		return nil
	}
	if err := URL("postgres://user@host:5432/db", "postgres", "postgresql")(s); err != nil {
		return errors.New(err.Error() + ", or keyword=value pairs (host=... dbname=...)")
	}
	return nil
}
