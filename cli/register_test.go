package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCommandsSetup checks that every command gets its examples, and the
// config flags exactly when it works on a store.
func TestCommandsSetup(t *testing.T) {
	cmds := Commands(nil, nil)
	if len(cmds) == 0 || cmds[0].Name != "bootstrap" {
		t.Fatalf("commands %v: want bootstrap first", cmds)
	}
	for _, c := range cmds {
		cmd := &cobra.Command{Use: c.Name}
		c.Setup(cmd)
		if cmd.Example == "" || !strings.HasPrefix(c.Summary().Example, "switchyard "+c.Name+" ") {
			t.Errorf("%s: example %q, summary %q", c.Name, cmd.Example, c.Summary().Example)
		}
		hasConfig := cmd.PersistentFlags().Lookup("config") != nil && cmd.PersistentFlags().Lookup("adapter") != nil
		if want := c.Name != "demo-backend"; hasConfig != want {
			t.Errorf("%s: config flags %v, want %v", c.Name, hasConfig, want)
		}
	}
}
