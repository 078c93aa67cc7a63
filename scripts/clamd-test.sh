#!/usr/bin/env bash
# Starts or stops a throwaway clamd for tests, listening on 127.0.0.1 only.
#
#   scripts/clamd-test.sh start [DIR [PORT]]   prints the address, e.g. tcp://127.0.0.1:41234
#   scripts/clamd-test.sh stop DIR
#
# DIR (default: a new temporary directory) holds the config, the pid file,
# the log and the signature database. No public signature database is
# available offline, so the database is one MD5 signature of the EICAR
# test file, made with sigtool; clamd then answers INSTREAM with
# "stream: eicar.com.UNOFFICIAL FOUND" for it. PORT defaults to a free
# random port. Needs the Debian package clamav-daemon (clamd, sigtool).
set -euo pipefail

die() { echo "clamd-test: $*" >&2; exit 1; }

ping_clamd() { # port
	local reply
	{ exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	printf 'zPING\0' >&3
	reply=$(timeout 2 head -c 4 <&3 || true)
	exec 3>&-
	[ "$reply" = "PONG" ]
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
	command -v clamd >/dev/null || die "clamd not found: apt-get install -y clamav-daemon"
	command -v sigtool >/dev/null || die "sigtool not found: apt-get install -y clamav"
	local dir=${1:-} fixed_port=${2:-} port
	[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/clamd-test.XXXXXX")
	mkdir -p "$dir/db" "$dir/tmp"
	dir=$(cd "$dir" && pwd)

	# The EICAR test string, assembled so that this script is not itself
	# a match for scanners that read source trees.
	local a='X5O!P%@AP[4\PZX54(P^)7CC)7}$' b='EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'
	printf '%s%s' "$a" "$b" >"$dir/eicar.com"
	(cd "$dir" && sigtool --md5 eicar.com) >"$dir/db/test.hdb"

	# A random port may be taken between the check and clamd's bind (other
	# tests pick ports too): clamd then exits, and another port is tried.
	local attempt
	for attempt in 1 2 3; do
		port=$fixed_port
		if [ -z "$port" ]; then
			for _ in $(seq 50); do
				port=$((20000 + RANDOM % 40000))
				port_free "$port" && break
			done
		fi
		write_conf "$dir" "$port"
		echo "clamd-test: attempt $attempt on port $port" >>"$dir/clamd.log"
		# In the foreground, started here, rather than daemonised: clamd's
		# own daemonising now and then ended the daemon as it became
		# ready, and reported a failure.
		clamd -c "$dir/clamd.conf" </dev/null >>"$dir/clamd.log" 2>&1 &
		echo $! >"$dir/clamd.pid"
		if wait_ready "$dir" "$port"; then
			echo "tcp://127.0.0.1:$port"
			return 0
		fi
		stop "$dir" || true
		[ -z "$fixed_port" ] || break
	done
	die "clamd did not answer PING; see $dir/clamd.log"
}

write_conf() { # dir port
	cat >"$1/clamd.conf" <<CONF
TCPSocket $2
TCPAddr 127.0.0.1
DatabaseDirectory $1/db
TemporaryDirectory $1/tmp
LogFile $1/clamd.log
Foreground true
Bytecode no
StreamMaxLength 64M
MaxFileSize 64M
MaxScanSize 128M
MaxThreads 4
ReadTimeout 30
CommandReadTimeout 10
SelfCheck 0
CONF
}

# wait_ready waits for clamd to answer PING, up to 60 s on a busy machine,
# and gives up at once when clamd has exited (a port taken, a bad config).
wait_ready() { # dir port
	local pid
	for _ in $(seq 600); do
		ping_clamd "$2" && return 0
		pid=$(cat "$1/clamd.pid")
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

stop() {
	local dir=${1:?usage: clamd-test.sh stop DIR}
	[ -f "$dir/clamd.pid" ] || return 0
	local pid
	pid=$(cat "$dir/clamd.pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$dir/clamd.pid"; return 0; }
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$dir/clamd.pid"
}

case "${1:-}" in
start) shift; start "$@" ;;
stop) shift; stop "$@" ;;
*) die "usage: $0 start [DIR [PORT]] | stop DIR" ;;
esac
