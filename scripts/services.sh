#!/usr/bin/env bash
# Makes sure the PostgreSQL and Redis servers the test suites need answer,
# that stripe-mock (Stripe's API as the payment suites call it) answers,
# and that clamd (ClamAV), which the malware-scan suites start themselves,
# is installed.
# Servers named by SWITCHYARD_TEST_POSTGRES / SWITCHYARD_TEST_REDIS are used
# as they are. Otherwise the local ones on 127.0.0.1:5432 and :6379 are
# used if they answer, started if installed, or installed from Debian's
# packages when running as root. When none of that is possible it stops
# and says what to do: the suites never run without their servers.
set -euo pipefail

answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_for() { # host port name
	for _ in $(seq 1 60); do
		answers "$1" "$2" && return 0
		sleep 0.5
	done
	echo "$3 did not start listening on $1:$2" >&2
	return 1
}

apt_tag=services
# shellcheck source=scripts/apt.sh
. "$(dirname "$0")/apt.sh"

ensure_postgres() {
	if [ -n "${SWITCHYARD_TEST_POSTGRES:-}" ] || answers 127.0.0.1 5432; then
		return 0
	fi
	if ! command -v pg_ctlcluster >/dev/null; then
		if ! can_install; then
			cat >&2 <<'MSG'
PostgreSQL is not answering on 127.0.0.1:5432 and is not installed.
Install and start it (Debian: sudo apt-get install postgresql), allow trust
authentication for 127.0.0.1 and create a database named test, or point
SWITCHYARD_TEST_POSTGRES at a server where the user may create databases.
MSG
			exit 1
		fi
		apt_install postgresql
	fi
	local version
	version=$(ls /etc/postgresql | sort -V | tail -n 1)
	local hba="/etc/postgresql/$version/main/pg_hba.conf"
	# A server installed for the test suites trusts loopback connections,
	# like the one the suites expect.
	if [ -w "$hba" ] && ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
		sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
	fi
	echo "services: starting PostgreSQL $version" >&2
	pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null ||
		pg_ctlcluster "$version" main start
	wait_for 127.0.0.1 5432 PostgreSQL
	if command -v psql >/dev/null && ! psql -h 127.0.0.1 -U postgres -Atc "select 1" test >/dev/null 2>&1; then
		psql -h 127.0.0.1 -U postgres -c "create database test" >/dev/null
	fi
}

ensure_redis() {
	# The Redis Cluster and Sentinel suites start their own servers with
	# redis-server and redis-cli, whatever server the other suites use.
	if [ -n "${SWITCHYARD_TEST_REDIS:-}" ] || answers 127.0.0.1 6379; then
		if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
			return 0
		fi
		if ! can_install; then
			echo "redis-server and redis-cli are needed by the Redis Cluster suites; install them (Debian: sudo apt-get install redis-server)" >&2
			exit 1
		fi
		apt_install redis-server
		return 0
	fi
	if ! command -v redis-server >/dev/null; then
		if ! can_install; then
			cat >&2 <<'MSG'
Redis is not answering on 127.0.0.1:6379 and is not installed.
Install and start it (Debian: sudo apt-get install redis-server), or point
SWITCHYARD_TEST_REDIS at a server the tests may write to.
MSG
			exit 1
		fi
		apt_install redis-server
	fi
	echo "services: starting Redis" >&2
	redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
		--dir /tmp --logfile /tmp/switchyard-test-redis.log
	wait_for 127.0.0.1 6379 Redis
}

# stripe-mock is a Go program: installed with the Go toolchain at the
# version the suites were written against, started on its usual port.
STRIPE_MOCK_VERSION=v0.203.0

ensure_stripe_mock() {
	if [ -n "${SWITCHYARD_TEST_STRIPE_MOCK:-}" ] || answers 127.0.0.1 12111; then
		return 0
	fi
	local go bin
	go=$(command -v go || echo /usr/local/go/bin/go)
	bin="$("$go" env GOPATH)/bin/stripe-mock"
	if ! command -v stripe-mock >/dev/null && [ ! -x "$bin" ]; then
		if [ ! -x "$go" ]; then
			echo "stripe-mock is not installed and Go is not there to install it: go install github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION" >&2
			exit 1
		fi
		echo "services: installing stripe-mock $STRIPE_MOCK_VERSION" >&2
		"$go" install "github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION"
	fi
	command -v stripe-mock >/dev/null && bin=$(command -v stripe-mock)
	echo "services: starting stripe-mock" >&2
	nohup "$bin" -http-port 12111 -https-port 12112 >/tmp/switchyard-test-stripe-mock.log 2>&1 &
	wait_for 127.0.0.1 12111 stripe-mock
}

ensure_clamav() {
	if [ -n "${SWITCHYARD_TEST_CLAMD_ADDR:-}" ] || { command -v clamd >/dev/null && command -v sigtool >/dev/null; }; then
		return 0
	fi
	if ! can_install; then
		cat >&2 <<'MSG'
clamd and sigtool (ClamAV) are not installed; the malware-scan suites start
a private clamd. Install them (Debian: sudo apt-get install clamav-daemon),
or point SWITCHYARD_TEST_CLAMD_ADDR at a running clamd.
MSG
		exit 1
	fi
	apt_install clamav-daemon
	# The package starts a system clamd and freshclam that look for
	# signatures online; the suites run their own clamd.
	if command -v systemctl >/dev/null; then
		systemctl stop clamav-daemon clamav-freshclam >/dev/null 2>&1 || true
	fi
}

# promtool (Debian's prometheus package) checks and tests the shipped
# Prometheus rules and the dashboard's queries (deploy/, deploy_test.go).
ensure_promtool() {
	if command -v promtool >/dev/null; then
		return 0
	fi
	if ! can_install; then
		cat >&2 <<'MSG'
promtool is not installed; the deploy/ suite checks the shipped Prometheus
rules and dashboard with it. Install it (Debian: sudo apt-get install
prometheus; or put promtool from a Prometheus release on PATH).
MSG
		exit 1
	fi
	apt_options=--no-install-recommends apt_install prometheus
	# The package starts a Prometheus server; the suite needs only promtool.
	if command -v systemctl >/dev/null; then
		systemctl stop prometheus prometheus-node-exporter >/dev/null 2>&1 || true
	fi
}

ensure_postgres
ensure_redis
ensure_stripe_mock
ensure_clamav
ensure_promtool
# The fonts documents and pictures fall back to for non-Latin scripts.
"$(dirname "$0")/fonts.sh" --tests
