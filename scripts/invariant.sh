#!/usr/bin/env bash
# The billing invariant's long run (make fuzz): TestBillingInvariant in
# e2e/ for INVARIANT_DURATION per storage mode (default 10m; the embedded
# SQLite store, then PostgreSQL + Redis), against bin/switchyard. Each
# mode draws its seed from the clock and prints it with every violation;
# INVARIANT_SEED=N INVARIANT_BATCH=B replays one batch, INVARIANT_MODES=
# sqlite or postgres runs one mode. Needs the services make test uses
# (scripts/services.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=$(command -v go || echo /usr/local/go/bin/go)
duration=${INVARIANT_DURATION:-10m}

# seconds turns a Go duration of hours, minutes and seconds ("1h30m",
# "45s") into seconds, for the test binary's own timeout.
seconds() {
	local d=$1 total=0 n unit
	while [[ $d =~ ^([0-9]+)(h|m|s)(.*)$ ]]; do
		n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
		case $unit in
		h) total=$((total + n * 3600)) ;;
		m) total=$((total + n * 60)) ;;
		s) total=$((total + n)) ;;
		esac
	done
	if [[ -n $d || $total -eq 0 ]]; then
		echo "INVARIANT_DURATION=$1: want a duration such as 45s, 10m or 1h30m" >&2
		exit 2
	fi
	echo "$total"
}

per_mode=$(seconds "$duration")
# Both modes, each with its batch in flight at the deadline, the cutting
# down of what it found, and the gateways' start and stop.
timeout=$((2 * per_mode + 900))s
echo "== billing invariant, $duration per storage mode"
SWITCHYARD_BIN=$PWD/bin/switchyard INVARIANT_DURATION=$duration \
	"$GO" test -count=1 -timeout "$timeout" -run '^TestBillingInvariant$' -v ./e2e/ |
	grep -v '^ *{"level"'
