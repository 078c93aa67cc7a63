#!/usr/bin/env bash
# Makes sure the dashboard's browser test can run: Node.js 20 or newer,
# Debian's chromium at /usr/bin/chromium, and the exact playwright-core of
# e2e/dashboard/package-lock.json installed with npm ci. Missing Debian
# packages are installed when running as root; otherwise it stops and says
# what to do, because the browser test never runs without them.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_tag=browser apt_options=--no-install-recommends
# shellcheck source=scripts/apt.sh
. scripts/apt.sh

node_major() { node -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }

ensure_node() {
	if command -v node >/dev/null && command -v npm >/dev/null && [ "$(node_major)" -ge 20 ]; then
		return 0
	fi
	if can_install && ! command -v node >/dev/null; then
		apt_install nodejs npm
	fi
	if ! command -v node >/dev/null || ! command -v npm >/dev/null || [ "$(node_major)" -lt 20 ]; then
		cat >&2 <<'MSG'
The dashboard's browser test needs Node.js 20 or newer with npm
(playwright-core requires it). Install it (https://nodejs.org, or your
distribution's nodejs and npm packages if they are 20 or newer) and run
scripts/browser.sh again.
MSG
		exit 1
	fi
}

ensure_chromium() {
	if [ -x /usr/bin/chromium ]; then
		return 0
	fi
	if ! can_install; then
		cat >&2 <<'MSG'
The dashboard's browser test drives Debian's Chromium at /usr/bin/chromium,
which is not installed. Install it (sudo apt-get install chromium
fonts-liberation) and run scripts/browser.sh again.
MSG
		exit 1
	fi
	# fonts-liberation gives the dashboard's system font stack a sans-serif
	# with Arial's metrics, so screenshots look as they do on a desktop.
	apt_install chromium fonts-liberation
}

# npm ci deletes and reinstalls node_modules; a stamp of the lock file it
# installed keeps repeated runs to a comparison.
ensure_modules() {
	local dir=e2e/dashboard
	local stamp=$dir/node_modules/.switchyard-lock
	if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
		return 0
	fi
	echo "browser: npm ci in $dir" >&2
	if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
		cat >&2 <<'MSG'
npm ci failed in e2e/dashboard: the npm registry must be reachable once to
install playwright-core (see the output above). Run scripts/browser.sh again
when it is.
MSG
		exit 1
	fi
	cp "$dir/package-lock.json" "$stamp"
}

ensure_node
ensure_chromium
ensure_modules
