package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// promtool is Prometheus' checker (Debian's prometheus package), which
// scripts/services.sh installs for make test.
func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: run scripts/services.sh as root, or apt-get install prometheus")
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestShippedPrometheusRules(t *testing.T) {
	dir := filepath.Join(repoRoot, "deploy", "prometheus")
	promtool(t, dir, "check", "rules", "switchyard-rules.yml")
	promtool(t, dir, "test", "rules", "switchyard-rules.test.yml")
}

// grafanaDashboard is the part of a Grafana dashboard the test reads.
type grafanaDashboard struct {
	Panels []struct {
		Title   string
		Type    string
		Targets []struct{ Expr string }
	}
	Templating struct {
		List []struct {
			Name       string
			Definition string
		}
	}
}

func readDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "grafana", "switchyard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("deploy/grafana/switchyard.json: %v", err)
	}
	return d
}

// dashboardExprs are the dashboard's queries with Grafana's variables
// replaced by values PromQL accepts.
func dashboardExprs(t *testing.T, d grafanaDashboard) []string {
	t.Helper()
	vars := strings.NewReplacer("$__rate_interval", "5m", "$route", ".*", "$model", ".*")
	var out []string
	for _, p := range d.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			out = append(out, vars.Replace(tg.Expr))
		}
	}
	if strings.Contains(strings.Join(out, "\n"), "$") {
		t.Fatalf("a dashboard query uses a variable the test does not know:\n%s", strings.Join(out, "\n"))
	}
	return out
}

// TestDashboardQueriesParse has promtool parse every query of the
// dashboard, offline: as recording rules of a generated rules file.
func TestGrafanaDashboardQueriesParse(t *testing.T) {
	exprs := dashboardExprs(t, readDashboard(t))
	if len(exprs) < 20 {
		t.Fatalf("%d dashboard queries", len(exprs))
	}
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		q, _ := json.Marshal(e) // a JSON string is a YAML string
		b.WriteString("      - record: dashboard:query_" + strconv.Itoa(i) + "\n        expr: " + string(q) + "\n")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard-rules.yml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, dir, "check", "rules", "dashboard-rules.yml")
}

var seriesName = regexp.MustCompile(`\b(?:switchyard|caddy_http)_[a-z_]+`)

// TestShippedSeriesAreDocumented checks that every series the dashboard
// and the rules use is one docs/operations.md documents, and the other
// way round for Switchyard's: a renamed metric cannot leave a dashboard
// panel empty unnoticed.
func TestShippedSeriesAreDocumented(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	// A table row of a series (module names, such as switchyard_proxy,
	// have one word), or the prose naming Caddy's.
	for _, m := range regexp.MustCompile("(?m)^\\| `(switchyard_[a-z]+_[a-z_]+)`|`(caddy_http_[a-z_]+)`").FindAllStringSubmatch(string(docs), -1) {
		documented[m[1]+m[2]] = true
	}
	rules, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "prometheus", "switchyard-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	d := readDashboard(t)
	shipped := strings.Join(dashboardExprs(t, d), "\n") + "\n" + string(rules)
	for _, v := range d.Templating.List {
		shipped += "\n" + v.Definition
	}
	used := map[string]bool{}
	for _, name := range seriesName.FindAllString(shipped, -1) {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			name = strings.TrimSuffix(name, suffix)
		}
		used[name] = true
	}
	for name := range used {
		if !documented[name] {
			t.Errorf("%s is shipped in deploy/ but not documented in docs/operations.md", name)
		}
	}
	var unused []string
	for name := range documented {
		if strings.HasPrefix(name, "switchyard_") && !used[name] {
			unused = append(unused, name)
		}
	}
	slices.Sort(unused)
	if len(unused) > 0 {
		t.Errorf("documented series no dashboard panel or rule shows: %v", unused)
	}
}

// TestExportedSeriesAreDocumented scrapes a gateway on the shipped
// configuration and checks that each of Switchyard's series is in
// docs/operations.md.
func TestExportedSeriesAreDocumented(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "documented")
	g := startGateway(t, e, filepath.Join(repoRoot, "Caddyfile.example"))
	up.Enqueue(demobackend.Reply{Content: "Fine."})
	if got, _, out := g.do("POST", "/v1/chat/completions", key, streamBody); got != 200 {
		t.Fatalf("%d %s", got, out)
	}
	settleLedgers(t)
	docs, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for series := range scrape(t, g) {
		name, _, _ := strings.Cut(series, "{")
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			name = strings.TrimSuffix(name, suffix)
		}
		if strings.HasPrefix(name, "switchyard_") && !seen[name] {
			seen[name] = true
			if !strings.Contains(string(docs), "`"+name+"`") {
				t.Errorf("%s is exported but not documented in docs/operations.md", name)
			}
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d of Switchyard's series were scraped: %v", len(seen), seen)
	}
}
