#!/usr/bin/env bash
# Measures the binary against stock Caddy (make size): bin/switchyard as
# make build makes it, and Caddy of the same version with
# modules/standard, built from the same go.mod with the same flags, so
# that the difference is what Switchyard adds. README.md, "Binary size",
# has the figures and what makes them up.
#
# SIZE_DETAIL=1 also builds both without -s -w and lists the modules that
# add the most symbol bytes over stock Caddy (go tool nm -size, each
# symbol counted to the module whose path is the longest prefix of its
# package). Symbols are code and data only: the stripped binary grows by
# about 1.8 bytes per symbol byte, for the line tables, type data and
# strings that nm does not attribute.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=$(command -v go || echo /usr/local/go/bin/go)

make --no-print-directory build >/dev/null

stock=$(mktemp -d)
trap 'rm -rf "$stock"' EXIT
cp go.mod go.sum "$stock"/
sed -i 's#^module .*#module stockcaddy#' "$stock/go.mod"
cat >"$stock/main.go" <<'GO'
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() { caddycmd.Main() }
GO
(cd "$stock" && "$GO" build -mod=mod -trimpath -ldflags "-s -w" -o caddy .)

ours=$(stat -c %s bin/switchyard)
theirs=$(stat -c %s "$stock/caddy")
caddy=$("$GO" list -m -f '{{.Version}}' github.com/caddyserver/caddy/v2)
awk -v o="$ours" -v t="$theirs" -v v="$caddy" 'BEGIN {
	printf "bin/switchyard            %6.1f MB\n", o / 1e6
	printf "Caddy %s standard   %6.1f MB\n", v, t / 1e6
	printf "difference                %6.1f MB (budget 25.0 MB)\n", (o - t) / 1e6
}'

[ "${SIZE_DETAIL:-}" = 1 ] || exit 0

"$GO" build -trimpath -o "$stock/switchyard.full" ./cmd/switchyard
(cd "$stock" && "$GO" build -mod=mod -trimpath -o caddy.full .)

# bymodule prints "bytes module" for the symbols of a binary built with
# symbols: the module list comes from the binary's build information.
bymodule() {
	"$GO" version -m "$1" | awk '$1 == "mod" || $1 == "dep" { print "mod", $2 }' >"$stock/mods"
	"$GO" tool nm -size "$1" | awk '$3 != "U"' | cat "$stock/mods" - | awk '
		$1 == "mod" { mod[$2] = 1; next }
		{
			size = $2; name = $4
			sub(/\[.*/, "", name)                          # type arguments
			sub(/^type:(\.eq\.|\.hash\.)?\*?/, "", name)    # type data, equality
			sub(/^go:itab\.\*?/, "", name)
			sub(/^\(\*?/, "", name)
			slash = match(name, /\/[^\/]*$/)
			pkg = slash ? substr(name, 1, slash) : ""
			rest = slash ? substr(name, slash + 1) : name
			dot = index(rest, ".")
			pkg = pkg (dot ? substr(rest, 1, dot - 1) : rest)
			m = pkg
			while (!(m in mod) && index(m, "/")) sub(/\/[^\/]*$/, "", m)
			if (!(m in mod)) m = (name ~ /^go:/ || pkg !~ /^[a-z]/) ? "(unattributed)" : "(standard-library)"
			sum[m] += size
		}
		END { for (m in sum) print sum[m], m }'
}
bymodule "$stock/switchyard.full" | sort -k2 >"$stock/ours.sym"
bymodule "$stock/caddy.full" | sort -k2 >"$stock/theirs.sym"
echo
echo "symbol bytes over stock Caddy, by module (top 25):"
join -1 2 -2 2 -a 1 -e 0 -o 0,1.1,2.1 "$stock/ours.sym" "$stock/theirs.sym" |
	awk '{ d = $2 - $3; total += d; if (d > 0) print d, $1 } END { printf "%d %s\n", total, "(all)" > "/dev/stderr" }' 2>"$stock/total" |
	sort -rn | head -25 | awk '{ printf "  %7.2f MB  %s\n", $1 / 1e6, $2 }'
awk '{ printf "  %7.2f MB  all modules together\n", $1 / 1e6 }' "$stock/total"
