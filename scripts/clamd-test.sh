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
	exec 3<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null || return 1
	printf 'zPING\0' >&3
	reply=$(timeout 2 head -c 4 <&3 || true)
	exec 3>&-
	[ "$reply" = "PONG" ]
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
	command -v clamd >/dev/null || die "clamd not found: apt-get install -y clamav-daemon"
	command -v sigtool >/dev/null || die "sigtool not found: apt-get install -y clamav"
	local dir=${1:-} port=${2:-}
	[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/clamd-test.XXXXXX")
	mkdir -p "$dir/db" "$dir/tmp"
	dir=$(cd "$dir" && pwd)
	if [ -z "$port" ]; then
		for _ in $(seq 50); do
			port=$((20000 + RANDOM % 40000))
			port_free "$port" && break
		done
	fi

	# The EICAR test string, assembled so that this script is not itself
	# a match for scanners that read source trees.
	local a='X5O!P%@AP[4\PZX54(P^)7CC)7}$' b='EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'
	printf '%s%s' "$a" "$b" >"$dir/eicar.com"
	(cd "$dir" && sigtool --md5 eicar.com) >"$dir/db/test.hdb"

	cat >"$dir/clamd.conf" <<CONF
TCPSocket $port
TCPAddr 127.0.0.1
DatabaseDirectory $dir/db
TemporaryDirectory $dir/tmp
PidFile $dir/clamd.pid
LogFile $dir/clamd.log
Foreground false
Bytecode no
StreamMaxLength 64M
MaxFileSize 64M
MaxScanSize 128M
MaxThreads 4
ReadTimeout 30
CommandReadTimeout 10
SelfCheck 0
CONF
	clamd -c "$dir/clamd.conf" >>"$dir/clamd.log" 2>&1 || die "clamd failed to start; see $dir/clamd.log"
	for _ in $(seq 100); do
		if ping_clamd "$port"; then
			echo "tcp://127.0.0.1:$port"
			return 0
		fi
		sleep 0.1
	done
	stop "$dir" || true
	die "clamd did not answer PING on 127.0.0.1:$port; see $dir/clamd.log"
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
