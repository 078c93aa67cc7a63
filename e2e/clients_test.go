package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestClientRecipes runs the recipes of docs/clients.md (e2e/clients) as
// they are printed there against the real binary: each asks for a chart,
// reads the /v3 keys the SDK's types leave out, prints the cost, and
// downloads the chart by its file_id.
func TestClientRecipes(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, key, g := fundedGateway(t, "recipes")
	env := append(os.Environ(), "SWITCHYARD_BASE_URL="+g.base, "SWITCHYARD_KEY="+key)

	recipes := []struct {
		name, file string
		command    func(t *testing.T) *exec.Cmd
	}{
		{"go", "go/main.go", func(t *testing.T) *exec.Cmd {
			goBin, err := exec.LookPath("go")
			if err != nil {
				goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
			}
			cmd := exec.Command(goBin, "run", "./e2e/clients/go")
			cmd.Dir = repoRoot
			return cmd
		}},
		{"node", "node/recipe.mjs", func(t *testing.T) *exec.Cmd {
			if _, err := exec.LookPath("node"); err != nil {
				t.Skip("node is not installed; the openai-node recipe runs where it is")
			}
			dir := filepath.Join(repoRoot, "e2e", "clients", "node")
			if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
				install := exec.Command("npm", "ci", "--no-audit", "--no-fund")
				install.Dir = dir
				if out, err := install.CombinedOutput(); err != nil {
					t.Fatalf("npm ci in e2e/clients/node (needs the npm registry once): %v\n%s", err, out)
				}
			}
			cmd := exec.Command("node", "recipe.mjs")
			cmd.Dir = dir
			return cmd
		}},
		{"curl", "curl/recipe.sh", func(t *testing.T) *exec.Cmd {
			for _, tool := range []string{"curl", "jq"} {
				if _, err := exec.LookPath(tool); err != nil {
					t.Fatalf("the curl recipe needs %s: apt-get install -y %s", tool, tool)
				}
			}
			cmd := exec.Command(filepath.Join(repoRoot, "e2e", "clients", "curl", "recipe.sh"))
			cmd.Dir = t.TempDir()
			return cmd
		}},
	}
	for _, r := range recipes {
		t.Run(r.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(repoRoot, "e2e", "clients", r.file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(doc, src) {
				t.Fatalf("docs/clients.md does not show e2e/clients/%s as it is", r.file)
			}
			cmd := r.command(t)
			cmd.Env = env
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
			}
			got := out.String()
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`(?m)^act: \{"id":1,"op":"start"|"act":\{"id":1,"op":"start"`),
				regexp.MustCompile(`"type":"chart"`),
				regexp.MustCompile(`(?m)^usage: prompt=[1-9][0-9]* completion=[1-9][0-9]* cost_cents=[0-9]+$`),
				regexp.MustCompile(`(?m)^downloaded file-[A-Za-z0-9]+: [1-9][0-9]* bytes`),
			} {
				if !want.MatchString(got) {
					t.Errorf("output lacks %s:\n%s", want, got)
				}
			}
		})
	}
}
