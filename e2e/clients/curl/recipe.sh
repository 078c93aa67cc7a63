#!/usr/bin/env bash
# Asks the /v3 assistant for a chart with curl, prints the /v3 keys of the
# stream (activity, artifacts, search sources) and the usage with its cost,
# and downloads the chart by its file_id. docs/clients.md shows it; the e2e
# tests run it against the real binary. Needs curl and jq.
#
#   SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... e2e/clients/curl/recipe.sh
set -euo pipefail
base=$SWITCHYARD_BASE_URL
auth="Authorization: Bearer $SWITCHYARD_KEY"

# One JSON chunk per line; [DONE] ends the stream.
curl -sN "$base/v3/chat/completions" -H "$auth" -H "Content-Type: application/json" \
	-H "X-Include-Cost: 1" \
	-d '{"model":"switchyard-demo","stream":true,"messages":[{"role":"user","content":"Draw a chart of quarterly revenue"}]}' |
	sed -n 's/^data: //p' | grep -v '^\[DONE\]$' >chunks.jsonl

jq -c '.choices[0].delta // {} | {act, artifact, search_sources} | with_entries(select(.value != null))
	| select(. != {}) | del(.artifact.image_base64)' chunks.jsonl
jq -r 'select(.usage) | .usage | "usage: prompt=\(.prompt_tokens) completion=\(.completion_tokens) cost_cents=\(.cost_cents)"' chunks.jsonl
# An error after the stream began arrives as a chunk with an "error" member.
jq -r 'select(.error) | "error: \(.error.code): \(.error.message)"' chunks.jsonl

for id in $(jq -r '.choices[0].delta.artifact.file_id // empty' chunks.jsonl); do
	curl -sf "$base/v3/files/$id/content" -H "$auth" -o "$id.png"
	echo "downloaded $id: $(wc -c <"$id.png") bytes"
done
