#!/usr/bin/env bash
# Runs the gateway on its embedded defaults (make run). Without
# SWITCHYARD_UPSTREAM it also runs the bundled demo backend and points the
# gateway at it. On a first start it creates account dev with $10.00 and
# prints its key once.
set -euo pipefail
cd "$(dirname "$0")/.."
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
echo "Gateway: http://$listen (try: curl http://$listen/v1/chat/completions -H \"Authorization: Bearer \$KEY\" ...)"
"$bin" run --config Caddyfile.example --adapter caddyfile
