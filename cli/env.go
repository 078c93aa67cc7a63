// Package cli holds Switchyard's management commands (keys, accounts,
// usage, bootstrap): their flags, what they do to the store and how they
// print it. It knows nothing of Caddy: the binary hands each command an
// Opener that finds the store the server uses.
package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// Env is what a management command works with: the store the server uses
// and the settings it was found by.
type Env struct {
	Store   storage.Store
	Hasher  policy.KeyHasher
	Profile policy.Profile
	Out     io.Writer
	JSON    bool // --json: print what the admin API would answer
}

// Opener opens the Env a command line names (its --config flag, or the
// environment). The command closes Env.Store when it is done.
type Opener func(ctx context.Context, cmd *cobra.Command) (*Env, error)

// withEnv opens the store and runs f. A failure goes back to the binary's
// main, which prints every command's error in one style; an API error
// is told by its message alone, as the admin API tells it.
func withEnv(open Opener, f func(ctx context.Context, c *Env, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		c, err := open(ctx, cmd)
		if err == nil {
			err = f(ctx, c, cmd, args)
			if cerr := c.Store.Close(); err == nil {
				err = cerr
			}
		}
		return Error(err)
	}
}

// Error is err as a command line reports it.
func Error(err error) error {
	var ae *apierror.Error
	if errors.As(err, &ae) {
		return errors.New(ae.Message)
	}
	return err
}

// ExampleText indents command lines the way cobra prints examples.
func ExampleText(lines ...string) string {
	s := ""
	for i, l := range lines {
		if i > 0 {
			s += "\n"
		}
		s += "  " + l
	}
	return s
}
