#!/usr/bin/env bash
# Renders every renderer's samples and turns them into PNG pages with the
# real tools, so that a person can look at what users will open:
#   scripts/check-renders.sh [out-dir]     (default: ./render-check)
# PDFs go through pdftoppm (poppler-utils); xlsx and docx through
# LibreOffice (headless) first. Missing tools are named, not skipped
# silently.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-render-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
GO=$(command -v go || echo /usr/local/go/bin/go)

SWITCHYARD_RENDER_SAMPLES="$out" "$GO" test -count=1 -run '^TestWriteSamples$' ./tools/render/...

missing=()
command -v pdftoppm >/dev/null || missing+=("pdftoppm (apt-get install poppler-utils)")
command -v soffice >/dev/null || missing+=("soffice (apt-get install libreoffice-writer-nogui libreoffice-calc-nogui)")

shopt -s nullglob
for f in "$out"/*.xlsx "$out"/*.docx; do
	if command -v soffice >/dev/null; then
		soffice --headless --convert-to pdf --outdir "$out" "$f" >/dev/null 2>&1 ||
			echo "LibreOffice could not convert $f" >&2
	fi
done
for f in "$out"/*.pdf; do
	if command -v pdftoppm >/dev/null; then
		pdftoppm -png -r 80 "$f" "${f%.pdf}"
	fi
	if command -v pdftotext >/dev/null; then
		pdftotext "$f" "${f%.pdf}.txt"
	fi
done

echo "Samples and their pictures are in $out:"
ls -1 "$out"
if [ ${#missing[@]} -gt 0 ]; then
	printf 'Not converted, missing: %s\n' "${missing[@]}" >&2
	exit 1
fi
