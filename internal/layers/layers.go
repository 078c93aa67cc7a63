// Package layers holds the import order of Switchyard's packages and the
// check that keeps the code to it: a package may import only packages of
// a lower layer. docs/architecture.md explains the order.
package layers

import (
	"fmt"
	"slices"
	"strings"
)

// Order lists the layers from the top down. An entry is a package path
// relative to the module, or a path ending in "/..." for a directory and
// everything below it; the first entry that matches a package places it.
// Packages of one layer do not import each other.
var Order = [][]string{
	{"cmd/...", "e2e/...", "bench", "deploy/..."},
	{"caddymodules"},
	{"caddymodules/accesslog"},
	{"cli"},
	{"node"},
	{"translator", "admin", "admin/dashboard"},
	{"payments", "alerts", "routing", "telemetry"},
	{"tools/toolset"},
	{"translator/request", "translator/upstream", "tools/memory", "tools/search", "tools/openurl", "tools/artifacts"},
	{"tools/toolstest"},
	{"tools"},
	{"tools/render/pdf", "tools/render/docx", "tools/render/xlsx", "tools/render/chart", "tools/render/diagram"},
	{"tools/render/markdown", "tools/render/rendertest", "tools/render/corpus"},
	{"tools/render", "tools/render/fonts", "tools/render/pngw"},
	{"files/filestest"},
	{"billing", "files"},
	{"files/extract"},
	{"policy/limits"},
	{"policy", "policy/passthrough"},
	{"storage/sqlite", "storage/postgres", "storage/storagetest"},
	{"storage/sqlstore", "storage/blob/blobtest", "internal/testupstream"},
	{"storage", "internal/body", "internal/httpstatus", "internal/demobackend", "internal/testenv", "internal/tokenizer"},
	{"translator/wire", "storage/blob", "internal/apierror", "internal/bodyconn", "internal/sse", "internal/clip", "internal/configcheck", "internal/duration", "internal/jsonscan", "internal/jsonstr", "internal/mediatype", "internal/fakeclock", "internal/guard", "internal/hmacsig", "internal/humantime", "internal/idle", "internal/layers", "internal/linebuffer", "internal/officetest", "internal/objectid", "internal/secrets", "internal/version", "files/internal/zipdir"},
}

// CaddyImporters are the only packages that may import Caddy, entries as
// in Order: the adapters and the binary. Everything else is plain Go,
// tested without a Caddy instance.
var CaddyImporters = []string{"caddymodules", "caddymodules/accesslog", "cmd/..."}

// caddyModule is the path of Caddy's module; its packages lie below it.
const caddyModule = "github.com/caddyserver/caddy/v2"

// CheckCaddy returns a line for every package that imports Caddy and is
// not one of CaddyImporters. imports maps packages (paths relative to the
// module) to every package they import (full paths).
func CheckCaddy(imports map[string][]string) []string {
	var problems []string
	for pkg, deps := range imports {
		if slices.ContainsFunc(CaddyImporters, func(entry string) bool { return matches(entry, pkg) }) {
			continue
		}
		for _, dep := range deps {
			if dep == caddyModule || strings.HasPrefix(dep, caddyModule+"/") {
				problems = append(problems, fmt.Sprintf("%s imports %s: only %s import Caddy; move the Caddy part to caddymodules",
					pkg, dep, strings.Join(CaddyImporters, " and ")))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// Layer returns the layer of a package path relative to the module, 0
// being the top, and whether Order places it at all.
func Layer(pkg string) (int, bool) {
	for i, layer := range Order {
		if slices.ContainsFunc(layer, func(entry string) bool { return matches(entry, pkg) }) {
			return i, true
		}
	}
	return 0, false
}

func matches(entry, pkg string) bool {
	dir, tree := strings.CutSuffix(entry, "/...")
	return pkg == dir || tree && strings.HasPrefix(pkg, dir+"/")
}

// Check returns a line for every import that does not point down in
// imports, which maps packages to the packages they import (paths
// relative to the module), and for every package Order does not place.
func Check(imports map[string][]string) []string {
	var problems []string
	for pkg, deps := range imports {
		from, ok := Layer(pkg)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no layer: add it to layers.Order and docs/architecture.md", pkg))
			continue
		}
		for _, dep := range deps {
			if to, ok := Layer(dep); ok && to <= from {
				problems = append(problems, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports must point down", pkg, from, dep, to))
			}
		}
	}
	slices.Sort(problems)
	return problems
}
