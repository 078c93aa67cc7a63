package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// recipe is one program of e2e/clients that docs/clients.md prints.
type recipe struct {
	name string
	file string // under e2e/clients, shown verbatim in docs/clients.md
	// command builds the program's command; node recipes install their
	// folder's locked dependencies first.
	command func(t *testing.T, ctx context.Context) *exec.Cmd
	want    []string // regular expressions the output must match
}

// Lines every chart recipe of the /v3 chat form prints.
var (
	wantAct        = `(?m)^(stream )?act: \{"id":1,"op":"start"`
	wantChart      = `(?m)^(stream )?artifact: .*"type":"chart"`
	wantDownloaded = `(?m)^downloaded file-[A-Za-z0-9]+: [1-9][0-9]* bytes of image/png`
)

// TestClientRecipes runs the recipes of docs/clients.md (e2e/clients) as
// they are printed there against the real binary: each reads the /v3 keys
// the SDK's types leave out, prints the usage and the cost, and downloads
// the chart by its file_id.
func TestClientRecipes(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, key, g := fundedGateway(t, "recipes")
	env := append(os.Environ(), "SWITCHYARD_BASE_URL="+g.base, "SWITCHYARD_KEY="+key)

	recipes := []recipe{
		{name: "go", file: "go/main.go", command: goRecipe("./e2e/clients/go"), want: []string{
			`(?m)^act: \{"id":1,"op":"start"`, `(?m)^artifact: .*"type":"chart"`,
			`(?m)^usage: prompt=[1-9][0-9]* completion=[1-9][0-9]* cost_cents=[0-9]+$`, wantDownloaded,
		}},
		{name: "node", file: "node/recipe.mjs", command: nodeRecipe("node", "recipe.mjs"), want: []string{
			`(?m)^act: \{"id":1,"op":"start"`, `(?m)^artifact: .*"type":"chart"`,
			`(?m)^usage: prompt=[1-9][0-9]* completion=[1-9][0-9]* cost_cents=[0-9]+$`, wantDownloaded,
		}},
		{name: "node responses", file: "node/responses.mjs", command: nodeRecipe("node", "responses.mjs"), want: []string{
			`(?m)^text: \S`, `(?m)^artifact: .*"type":"chart"`,
			`(?m)^usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`,
			`(?m)^stream act: \{"id":1,"op":"start"`, `(?m)^stream artifact: .*"type":"chart"`,
			`(?m)^stream text: \S`,
			`(?m)^stream usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`, wantDownloaded,
		}},
		{name: "ai sdk responses v3", file: "aisdk/responses.mjs", command: nodeRecipe("aisdk", "responses.mjs", "/v3"), want: []string{
			`(?m)^text: \S`, `(?m)^usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`,
			wantAct, wantChart, `(?m)^stream: \S`,
			`(?m)^stream usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`, wantDownloaded,
			`(?m)^error: 401 invalid_api_key: `,
		}},
		{name: "ai sdk responses v1", file: "aisdk/responses.mjs", command: nodeRecipe("aisdk", "responses.mjs", "/v1"), want: []string{
			`(?m)^text: \S`, `(?m)^usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`,
			`(?m)^stream: \S`, `(?m)^stream usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`,
			`(?m)^error: 401 invalid_api_key: `,
		}},
		{name: "ai sdk chat", file: "aisdk/chat.mjs", command: nodeRecipe("aisdk", "chat.mjs"), want: []string{
			wantAct, wantChart, `(?m)^text: \S`,
			`(?m)^usage: prompt=[1-9][0-9]* completion=[1-9][0-9]* cost_cents=[0-9]+$`, wantDownloaded,
		}},
		{name: "langchain", file: "langchain/recipe.mjs", command: nodeRecipe("langchain", "recipe.mjs"), want: []string{
			`(?m)^text: \S`, wantChart,
			`(?m)^usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`,
			wantAct, `(?m)^stream text: \S`,
			`(?m)^stream usage: input=[1-9][0-9]* output=[1-9][0-9]* cost_cents=[0-9]+$`, wantDownloaded,
		}},
		{name: "curl", file: "curl/recipe.sh", command: curlRecipe, want: []string{
			`"act":\{"id":1,"op":"start"`, `"type":"chart"`,
			`(?m)^usage: prompt=[1-9][0-9]* completion=[1-9][0-9]* cost_cents=[0-9]+$`, `(?m)^downloaded file-[A-Za-z0-9]+: [1-9][0-9]* bytes`,
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
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := r.command(t, ctx)
			cmd.Env = env
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
			}
			got := out.String()
			t.Logf("output:\n%s", got)
			for _, want := range r.want {
				if !regexp.MustCompile(want).MatchString(got) {
					t.Errorf("output lacks %s:\n%s", want, got)
				}
			}
		})
	}
}

func goRecipe(pkg string) func(*testing.T, context.Context) *exec.Cmd {
	return func(t *testing.T, ctx context.Context) *exec.Cmd {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		}
		cmd := exec.CommandContext(ctx, goBin, "run", pkg)
		cmd.Dir = repoRoot
		return cmd
	}
}

func curlRecipe(t *testing.T, ctx context.Context) *exec.Cmd {
	for _, tool := range []string{"curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the curl recipe needs %s: apt-get install -y %s", tool, tool)
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "e2e", "clients", "curl", "recipe.sh"))
	cmd.Dir = t.TempDir()
	return cmd
}

// nodeRecipe runs `node script args...` in e2e/clients/folder after
// installing the folder's package-lock.json.
func nodeRecipe(folder, script string, args ...string) func(*testing.T, context.Context) *exec.Cmd {
	return func(t *testing.T, ctx context.Context) *exec.Cmd {
		dir := filepath.Join(repoRoot, "e2e", "clients", folder)
		installNodeDeps(t, ctx, dir)
		cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
		cmd.Dir = dir
		return cmd
	}
}

// installNodeDeps runs `npm ci` in dir unless node_modules was installed
// from the package-lock.json dir holds now (a copy kept in node_modules
// tells). npm's own cache (~/.npm) lets a reinstall run offline.
func installNodeDeps(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the Node recipes need %s (Node.js 20 or later with npm): "+
				"apt-get install -y nodejs npm, or https://nodejs.org/en/download", tool)
		}
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	stamp := filepath.Join(dir, "node_modules", ".installed-package-lock.json")
	if installed, err := os.ReadFile(stamp); err == nil && bytes.Equal(installed, lock) {
		return
	}
	install := exec.CommandContext(ctx, "npm", "ci", "--prefer-offline", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s (needs the npm registry or a warm npm cache): %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(stamp, lock, 0o644); err != nil {
		t.Fatal(err)
	}
}
