#!/usr/bin/env bash
# Measures the binary against stock Caddy (make size): bin/switchyard as
# make build makes it, and Caddy of the same version with
# modules/standard, built from the same go.mod with the same flags, so
# that the difference is what Switchyard adds. README.md, "Binary size",
# has the figures and what makes them up.
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
