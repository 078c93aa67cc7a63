#!/usr/bin/env bash
# The soak suite (make soak): e2e/soak_test.go, behind the soak build tag,
# against the built binary and the PostgreSQL and Redis of
# scripts/services.sh. SOAK_DURATION sets how long each of its two tests
# runs (default 10m); SOAK_STREAMS (default 1000) and SOAK_TOKEN_MS (the
# upstream's delay between tokens, default 100) shape the stream test.
# Resource samples and the limits' tallies are printed as the tests go.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=$(command -v go || echo /usr/local/go/bin/go)
duration=${SOAK_DURATION:-10m}
export SOAK_DURATION=$duration
# The test binary's timeout: two runs of SOAK_DURATION plus ten minutes
# for start-up and the checks after each.
case $duration in
*h) seconds=$(( ${duration%h} * 3600 )) ;;
*m) seconds=$(( ${duration%m} * 60 )) ;;
*s) seconds=${duration%s} ;;
*) echo "SOAK_DURATION=$duration: want a whole number of s, m or h (60s, 10m, 1h)" >&2; exit 2 ;;
esac
seconds=$(( 2 * seconds + 600 ))
SWITCHYARD_BIN=${SWITCHYARD_BIN:-$PWD/bin/switchyard} \
	"$GO" test -tags soak -count=1 -v -timeout "${seconds}s" -run '^TestSoak' ./e2e
