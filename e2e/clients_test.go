package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recipe is one program of e2e/clients that docs/clients.md prints.
type recipe struct {
	name string
	file string // under e2e/clients, shown verbatim in docs/clients.md
	// command builds the program's command.
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
	installNodeDeps(t, "node", "aisdk", "langchain")
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
			`(?m)^error: 401 invalid_api_key: `,
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

// nodeRecipe runs `node script args...` in e2e/clients/folder, whose
// dependencies installNodeDeps installed.
func nodeRecipe(folder, script string, args ...string) func(*testing.T, context.Context) *exec.Cmd {
	return func(t *testing.T, ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
		cmd.Dir = filepath.Join(repoRoot, "e2e", "clients", folder)
		return cmd
	}
}

// nodeInstallHelp says how to get what the Node recipes need.
const nodeInstallHelp = "the Node recipes need Node.js 20 or later with npm: " +
	"apt-get install -y nodejs npm, or https://nodejs.org/en/download"

// installNodeDeps runs `npm ci` in each of e2e/clients/folders, all at
// once, skipping a folder whose node_modules was installed from the
// package-lock.json it holds now (a copy kept in node_modules tells). npm's
// own cache (~/.npm) lets a reinstall run offline.
func installNodeDeps(t *testing.T, folders ...string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: %s", tool, nodeInstallHelp)
		}
	}
	version, err := exec.Command("node", "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v: %s", err, nodeInstallHelp)
	}
	if major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(string(version), "v"), ".", 2)[0]); major < 20 {
		t.Fatalf("node is %s: %s", bytes.TrimSpace(version), nodeInstallHelp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	errs := make([]error, len(folders))
	var wg sync.WaitGroup
	for i, folder := range folders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = npmCI(ctx, filepath.Join(repoRoot, "e2e", "clients", folder))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func npmCI(ctx context.Context, dir string) error {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	stamp := filepath.Join(dir, "node_modules", ".installed-package-lock.json")
	if installed, err := os.ReadFile(stamp); err == nil && bytes.Equal(installed, lock) {
		return nil
	}
	install := exec.CommandContext(ctx, "npm", "ci", "--prefer-offline", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s (needs the npm registry or a warm npm cache): %v\n%s", dir, err, out)
	}
	return os.WriteFile(stamp, lock, 0o644)
}
