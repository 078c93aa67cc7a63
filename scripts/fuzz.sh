#!/usr/bin/env bash
# Runs every native Go fuzz target of the module for a fixed budget each
# (make fuzz). FUZZTIME sets the budget (default 30s); crashers are kept
# in the package's testdata/fuzz, where the normal test run replays them.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=$(command -v go || echo /usr/local/go/bin/go)
budget=${FUZZTIME:-30s}
failed=0
while IFS=: read -r file target; do
	pkg=./$(dirname "$file")
	echo "== $pkg $target ($budget)"
	if ! "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$budget" -fuzzminimizetime 5s "$pkg"; then
		failed=1
	fi
done < <(git grep -o -E '^func (Fuzz[A-Za-z0-9_]+)' -- '*_test.go' | sed -E 's/:func /:/' | sort -u)
exit $failed
