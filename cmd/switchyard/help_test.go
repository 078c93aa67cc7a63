package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/caddymodules"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// run executes the command tree as the binary would with args.
func run(t *testing.T, args ...string) (stdout string, msg string, status int) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{}, args...))
	if cmd, err := root.ExecuteC(); err != nil {
		msg, status = failure(cmd, err)
	}
	return out.String(), msg, status
}

func TestHelpGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"root", nil},
		{"root", []string{"help"}},
		{"root", []string{"--help"}},
		{"bootstrap", []string{"help", "bootstrap"}},
		{"accounts", []string{"help", "accounts"}},
		{"accounts", []string{"accounts"}},
		{"accounts_list", []string{"accounts", "list", "--help"}},
		{"accounts_alerts", []string{"help", "accounts", "alerts"}},
		{"accounts_alerts_set", []string{"accounts", "alerts", "set", "--help"}},
		{"accounts_autotopup", []string{"help", "accounts", "autotopup"}},
		{"accounts_autotopup_set", []string{"accounts", "autotopup", "set", "--help"}},
		{"keys", []string{"keys", "--help"}},
		{"keys_list", []string{"help", "keys", "list"}},
		{"usage", []string{"help", "usage"}},
		{"admin", []string{"help", "admin"}},
		{"admin_token", []string{"help", "admin", "token"}},
		{"version", []string{"help", "version"}},
	} {
		t.Run(strings.Join(append([]string{"switchyard"}, tc.args...), " "), func(t *testing.T) {
			got, msg, status := run(t, tc.args...)
			if status != 0 || msg != "" {
				t.Fatalf("exit %d, %q", status, msg)
			}
			path := filepath.Join("testdata", tc.golden+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/switchyard -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("help differs from %s (go test ./cmd/switchyard -update rewrites it):\n%s", path, got)
			}
		})
	}
}

func TestSwitchyardCommandsComeFirst(t *testing.T) {
	help, _, _ := run(t, "help")
	ours := strings.Index(help, "Switchyard commands:")
	caddys := strings.Index(help, "Caddy's commands")
	if ours < 0 || caddys < ours {
		t.Fatalf("Switchyard's commands are not listed before Caddy's:\n%s", help)
	}
	cmds := caddymodules.CLICommands()
	if len(cmds) < 5 {
		t.Fatalf("%d Switchyard commands, want bootstrap, accounts, keys, usage and admin at least", len(cmds))
	}
	for _, c := range cmds {
		if !strings.HasPrefix(c.Example, "switchyard "+c.Name) {
			t.Errorf("%s: example %q does not run it", c.Name, c.Example)
		}
		if !strings.Contains(help[ours:caddys], "$ "+c.Example+"\n") {
			t.Errorf("%s: its example is not in the list", c.Name)
		}
	}
	for _, name := range []string{"run", "adapt", "validate", "reload", "stop", "manpage", "completion"} {
		if !strings.Contains(help[caddys:], "\n  "+name+" ") {
			t.Errorf("Caddy's %s is not listed", name)
		}
	}
	if strings.Contains(help, "caddy run") {
		t.Error("the help tells to run caddy")
	}
}

func TestUsageLinesNameSwitchyard(t *testing.T) {
	for _, c := range newRoot().Commands() {
		if line := c.UseLine(); !strings.HasPrefix(line, "switchyard "+c.Name()) {
			t.Errorf("usage line %q", line)
		}
	}
}

func TestVersionNamesBoth(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, status := run(t, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if status != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "Switchyard ") || !strings.HasPrefix(lines[1], "Caddy v2.") {
			t.Errorf("%v: exit %d\n%s", args, status, out)
		}
	}
}

func TestOneErrorStyle(t *testing.T) {
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"keys", "list"}, `Run "switchyard keys list --help"`},
		{[]string{"keys", "list", "--account", "a", "--nope"}, `Run "switchyard keys list --help"`},
		{[]string{"accounts", "lsit"}, `Run "switchyard accounts --help"`},
		{[]string{"acounts"}, `Run "switchyard --help"`},
		{[]string{"usage", "--account"}, `Run "switchyard usage --help"`},
		{[]string{"version", "extra"}, `Run "switchyard version --help"`},
	} {
		_, msg, status := run(t, tc.args...)
		if status != 2 || !strings.HasPrefix(msg, "switchyard: ") || !strings.HasSuffix(msg, tc.hint+" for usage.") || strings.Count(msg, "switchyard: ") != 1 {
			t.Errorf("%v: exit %d, message %q", tc.args, status, msg)
		}
	}
}
