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

// TestOnlyAdaptersImportCaddy fails when a package other than
// caddymodules and cmd imports any package of Caddy.
func TestOnlyAdaptersImportCaddy(t *testing.T) {
	all := listAllImports(t)
	if len(all["caddymodules"]) == 0 {
		t.Fatal("go list found no imports of caddymodules; is this the module root?")
	}
	for _, p := range CheckCaddy(all) {
		t.Error(p)
	}
}

func TestCheckCaddy(t *testing.T) {
	caddyhttp := caddyModule + "/modules/caddyhttp"
	tests := []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{name: "the adapters may", imports: map[string][]string{"caddymodules": {caddyhttp}, "cmd/switchyard": {caddyModule}}, want: 0},
		{name: "a library may not", imports: map[string][]string{"routing": {"net/http", caddyhttp}}, want: 1},
		{name: "nor the module root", imports: map[string][]string{"billing": {caddyModule}}, want: 1},
		{name: "a name that only starts alike is not Caddy", imports: map[string][]string{"billing": {caddyModule + "x"}}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckCaddy(tt.imports); len(got) != tt.want {
				t.Errorf("CheckCaddy = %q; want %d problems", got, tt.want)
			}
		})
	}
}

// listImports maps each package of the module to the module packages its
// non-test files import, paths relative to the module.
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := make(map[string][]string)
	for pkg, deps := range listAllImports(t) {
		var own []string
		for _, d := range deps {
			if r, ok := relative(d); ok {
				own = append(own, r)
			}
		}
		imports[pkg] = own
	}
	return imports
}

// relative is p relative to the module, if p is one of its packages.
func relative(p string) (string, bool) {
	if p == module {
		return "", true
	}
	return strings.CutPrefix(p, module+"/")
}

// listAllImports maps each package of the module, relative to it, to
// every package its non-test files import, full paths.
func listAllImports(t *testing.T) map[string][]string {
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
	imports := make(map[string][]string)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, _ := relative(fields[0])
		imports[pkg] = fields[1:]
	}
	return imports
}
