package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/switchyardhq/switchyard"

// TestImportsPointDown fails when a package imports one of its own layer
// or above, or when a package has no place in Order.
func TestImportsPointDown(t *testing.T) {
	imports := listImports(t)
	if len(imports) < 20 {
		t.Fatalf("go list found only %d packages; is this the module root?", len(imports))
	}
	for _, p := range Check(imports) {
		t.Error(p)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{name: "down is fine", imports: map[string][]string{"caddymodules": {"translator", "storage"}, "translator": {"storage"}}, want: 0},
		{name: "up is refused", imports: map[string][]string{"storage/sqlstore": {"files"}}, want: 1},
		{name: "sideways is refused", imports: map[string][]string{"billing": {"files"}}, want: 1},
		{name: "below a dots entry", imports: map[string][]string{"cmd/switchyard": {"caddymodules"}}, want: 0},
		{name: "a prefix is not a parent", imports: map[string][]string{"cmdline": nil}, want: 1},
		{name: "a sub-package needs its own entry", imports: map[string][]string{"translator/other": nil}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Check(tt.imports); len(got) != tt.want {
				t.Errorf("Check = %q; want %d problems", got, tt.want)
			}
		})
	}
}

// listImports maps each package of the module to the module packages its
// non-test files import, paths relative to the module.
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	imports := make(map[string][]string)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, _ := rel(fields[0])
		var deps []string
		for _, d := range fields[1:] {
			if r, ok := rel(d); ok {
				deps = append(deps, r)
			}
		}
		imports[pkg] = deps
	}
	return imports
}
