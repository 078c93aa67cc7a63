#!/usr/bin/env bash
# Runs the gateway on its embedded defaults (make run). Without
# SWITCHYARD_UPSTREAM it also runs the bundled demo backend and points the
# gateway at it. On a first start it creates account dev with $10.00 and
# prints its key once, and an operator token for the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
# Fonts for non-Latin text in generated documents; never fatal here.
scripts/fonts.sh || true
bin=./bin/switchyard

export SWITCHYARD_DATA_DIR=${SWITCHYARD_DATA_DIR:-./data}
listen=${SWITCHYARD_LISTEN:-127.0.0.1:8080}

if [ -z "${SWITCHYARD_UPSTREAM:-}" ]; then
	demo=${SWITCHYARD_DEMO_LISTEN:-127.0.0.1:9090}
	"$bin" demo-backend --listen "$demo" &
	demo_pid=$!
	trap 'kill $demo_pid 2>/dev/null || true' EXIT
	export SWITCHYARD_UPSTREAM="http://$demo/v1"
	echo "SWITCHYARD_UPSTREAM is not set: using the bundled demo backend at $SWITCHYARD_UPSTREAM"
fi

"$bin" bootstrap --account dev --usd 10.00

# The admin secret is generated on first use: when there is none yet, this
# is a first start, and the operator gets a token for the dashboard once.
if [ -z "${SWITCHYARD_ADMIN_JWT_SECRET:-}" ] && [ -z "${SWITCHYARD_POSTGRES_URL:-}" ] &&
	[ ! -e "$SWITCHYARD_DATA_DIR/admin_jwt_secret" ]; then
	token=$("$bin" admin token --operator --ttl 12h --subject make-run | tail -n 1)
	echo
	echo "Dashboard: http://$listen/dashboard/"
	echo "Sign in with this operator token (valid 12h, shown only this once; mint another with"
	echo "  $bin admin token --operator):"
	echo "$token"
	echo
fi
echo "Gateway: http://$listen (try: curl http://$listen/v1/chat/completions -H \"Authorization: Bearer \$KEY\" ...)"
"$bin" run --config Caddyfile.example --adapter caddyfile
