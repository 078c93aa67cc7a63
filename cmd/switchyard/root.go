package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/switchyardhq/switchyard/caddymodules"
	"github.com/switchyardhq/switchyard/internal/version"
)

const (
	groupSwitchyard = "switchyard"
	groupCaddy      = "caddy"
)

const rootLong = `Switchyard is an OpenAI-compatible gateway: the /v1 API passed through to
your models and the /v3 assistant API with tools, both billed per token
against prepaid balances. It is Caddy with Switchyard's modules built in,
so Caddy's own commands work as well.`

const rootExample = `  switchyard run --config Caddyfile.example   serve with the shipped configuration
  switchyard bootstrap                        a first account and key on an empty store`

// newRoot builds the command tree the binary runs. Caddy's own root
// would introduce Caddy and list Switchyard's commands alphabetically
// among its own; this one lists Switchyard's first, then Caddy's
// unchanged, and reports Switchyard's version.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:     "switchyard",
		Short:   "An OpenAI-compatible gateway built on Caddy",
		Long:    rootLong,
		Example: rootExample,
		Version: versionText(),
		// main prints every error once, in one style.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("{{.Version}}")
	root.AddGroup(
		&cobra.Group{ID: groupSwitchyard, Title: "Switchyard commands:"},
		&cobra.Group{ID: groupCaddy, Title: "Caddy's commands:"},
	)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{cmd: c, err: err}
	})
	root.SetHelpCommandGroupID(groupSwitchyard)
	root.SetCompletionCommandGroupID(groupCaddy)

	ours := caddymodules.CLICommands()
	isOurs := make(map[string]bool, len(ours))
	for _, c := range ours {
		isOurs[c.Name] = true
	}
	all := caddycmd.Commands()
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "version" || name == "completion" {
			continue // Switchyard's version below; cobra's completion command
		}
		c := toCobra(all[name])
		c.GroupID = groupCaddy
		if name == "validate" || name == "adapt" {
			// They provision configs (adapt with --validate) that never run.
			c.PreRun = func(*cobra.Command, []string) { caddymodules.ValidateOnly() }
		}
		if isOurs[name] {
			c.GroupID = groupSwitchyard
			refuseUnknownSubcommands(c)
		}
		root.AddCommand(c)
	}
	root.AddCommand(versionCommand(), manpageCommand(root))

	caddyHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c != root {
			caddyHelp(c, args)
			return
		}
		writeRootHelp(c.OutOrStdout(), root, ours)
	})
	return root
}

// toCobra is what Caddy does to a registered command, except that a
// failure comes back to main as an error with its exit status instead
// of being logged.
func toCobra(cc caddycmd.Command) *cobra.Command {
	c := &cobra.Command{Use: cc.Name + " " + cc.Usage, Short: cc.Short, Long: cc.Long}
	if cc.CobraFunc != nil {
		cc.CobraFunc(c)
		return c
	}
	f := cc.Func
	c.RunE = func(c *cobra.Command, _ []string) error {
		status, err := f(caddycmd.Flags{FlagSet: c.Flags()})
		if err == nil && status <= 1 {
			return nil
		}
		return exitError{status: status, err: err}
	}
	c.Flags().AddGoFlagSet(cc.Flags)
	return c
}

// refuseUnknownSubcommands makes a command that only groups others fail
// on a word it does not know, where cobra would print its help and exit
// 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return usageError{cmd: c, err: fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath())}
	}
}

func versionText() string {
	_, caddyVersion := caddy.Version()
	return fmt.Sprintf("Switchyard %s\nCaddy %s\n", version.String(), caddyVersion)
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Prints Switchyard's version and Caddy's",
		Example: "  switchyard version",
		GroupID: groupSwitchyard,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := io.WriteString(c.OutOrStdout(), versionText())
			return err
		},
	}
}

// manpageCommand is Caddy's manpage command, which Caddy adds to its own
// root only.
func manpageCommand(root *cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:     "manpage --directory <path>",
		Short:   "Generates the manual pages for every command",
		GroupID: groupCaddy,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir, _ := c.Flags().GetString("directory")
			if strings.TrimSpace(dir) == "" {
				return usageError{cmd: c, err: errors.New("--directory is required")}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return doc.GenManTree(root, &doc.GenManHeader{Title: "Switchyard", Section: "8"}, dir)
		},
	}
	c.Flags().StringP("directory", "o", "", "The directory the manual pages are written to")
	return c
}

// writeRootHelp lists Switchyard's commands first, each with one line
// and one example, then Caddy's.
func writeRootHelp(w io.Writer, root *cobra.Command, ours []caddymodules.CLICommand) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  switchyard <command> [flags]\n\nExamples:\n%s\n\nSwitchyard commands:\n", root.Long, root.Example)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, o := range ours {
		fmt.Fprintf(tw, "  %s\t%s\n", o.Name, o.Short)
		fmt.Fprintf(tw, "  \t  $ %s\n", o.Example)
	}
	fmt.Fprintf(tw, "  version\tPrints Switchyard's version and Caddy's\n")
	fmt.Fprintf(tw, "  \t  $ switchyard version\n")
	fmt.Fprintf(tw, "  help\tHelp about any command\n")
	fmt.Fprintf(tw, "  \t  $ switchyard help accounts\n")
	_ = tw.Flush()

	fmt.Fprint(w, "\nCaddy's commands (https://caddyserver.com/docs/command-line):\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range root.Commands() {
		if c.GroupID == groupCaddy && c.IsAvailableCommand() {
			fmt.Fprintf(tw, "  %s\t%s\n", c.Name(), c.Short)
		}
	}
	_ = tw.Flush()
	fmt.Fprint(w, "\nFlags:\n  -h, --help      help for switchyard\n  -v, --version   Switchyard's version and Caddy's\n")
	fmt.Fprint(w, "\nUse \"switchyard help <command>\" for a command's flags and examples.\n")
}

// exitError is a Caddy command's failure with the exit status it asked
// for.
type exitError struct {
	status int
	err    error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.status)
	}
	return e.err.Error()
}

// usageError is a command line the command cannot run: main adds where
// to read how.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e usageError) Error() string { return e.err.Error() }

// failure is what main prints for err, which cmd returned, and the exit
// status. Caddy's own commands log their errors as they fail and mark
// that by silencing cobra's, so they are not printed twice.
func failure(cmd *cobra.Command, err error) (string, int) {
	if cmd.HasParent() && cmd.SilenceErrors {
		return "", caddyExitCode(err)
	}
	msg := "switchyard: " + err.Error()
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return msg + "\nRun \"" + ue.cmd.CommandPath() + " --help\" for usage.", 2
	case isCobraUsageError(err):
		return msg + "\nRun \"" + cmd.CommandPath() + " --help\" for usage.", 2
	}
	var ee exitError
	if errors.As(err, &ee) {
		return msg, max(ee.status, 1)
	}
	return msg, 1
}

// isCobraUsageError tells the command-line errors cobra finds itself,
// which it returns as plain errors.
func isCobraUsageError(err error) bool {
	for _, p := range []string{"unknown command ", "required flag", "accepts ", "unknown flag", "invalid argument ", "flag needs an argument"} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// caddyExitCode is the exit status a Caddy command asked for: its error
// type is unexported, its ExitCode field is not.
func caddyExitCode(err error) int {
	for e := err; e != nil; e = errors.Unwrap(e) {
		v := reflect.ValueOf(e)
		if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
			if f := v.Elem().FieldByName("ExitCode"); f.IsValid() && f.CanInt() {
				return int(f.Int())
			}
		}
	}
	return 1
}
