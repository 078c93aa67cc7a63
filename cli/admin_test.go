package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestAdminToken(t *testing.T) {
	run := func(args ...string) (string, *TokenRequest, error) {
		var got *TokenRequest
		root := &cobra.Command{Use: "admin"}
		Admin(root, func(_ *cobra.Command, req TokenRequest) (string, error) {
			got = &req
			return "eyJ.token", nil
		})
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"token"}, args...))
		err := root.Execute()
		return out.String(), got, err
	}
	out, req, err := run("--account", "acme", "--ttl", "1h")
	if err != nil || req == nil || req.Account != "acme" || req.Operator || req.Subject != "switchyard-cli" {
		t.Fatalf("token --account acme: %v, %+v", err, req)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[len(lines)-1] != "eyJ.token" || !strings.Contains(out, "account acme") {
		t.Errorf("output %q: want the scope, then the token alone on the last line", out)
	}
	for _, args := range [][]string{{"--operator", "--account", "acme"}, {}, {"--operator", "--ttl", "-1m"}} {
		if _, req, err := run(args...); err == nil || req != nil {
			t.Errorf("token %v: minted (%v)", args, err)
		}
	}
}
