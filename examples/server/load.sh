#!/bin/bash
# load.sh — one run of counter_server under load, as one program to record:
# start the server on a free loopback port, run two clients at the same
# time (each sends N "incr hits" and reads each reply), ask "get hits",
# stop the server with SIGTERM, and exit with the clients' verdict:
# 0 when hits is 2*N and the server exited 0, 1 otherwise (a message on
# stderr).
#
#   ./load.sh [SERVER [N]]      SERVER defaults to ./counter_server, N to 100
#
#   mcpredict cc -O1 -o counter_server counter_server.c
#   mcpredict record -o server.csv -- ./load.sh ./counter_server
#   mcpredict reproduce server.csv
#
# Only 127.0.0.1 is used; the clients are bash's /dev/tcp.
set -u
server=${1:-./counter_server}
n=${2:-100}
tmp=$(mktemp -d)
spid=
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "load.sh: $*" >&2
	if [ -n "$spid" ]; then
		kill -TERM "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
	exit 1
}

# A free port: try one, and another if the server cannot listen on it
# (it exits 2 then). The server says "listening" when it accepts.
for try in 1 2 3 4 5 6 7 8 9 10; do
	port=$((20000 + RANDOM % 30000))
	"$server" "$port" >"$tmp/out" 2>"$tmp/err" &
	spid=$!
	for wait in $(seq 500); do # up to 10 s (a recorded server starts slower)
		grep -q '^listening' "$tmp/out" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.02
	done
	grep -q '^listening' "$tmp/out" && break
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=
done
[ -n "$spid" ] || fail "$server did not start: $(cat "$tmp/err")"

client() { # $1: the number of incr
	exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
	local i reply
	for ((i = 0; i < $1; i++)); do
		printf 'incr hits\n' >&3
		IFS= read -r -t 10 reply <&3 || exit 1
	done
	exec 3>&-
}

client "$n" &
c1=$!
client "$n" &
c2=$!
wait "$c1" || fail "client 1 failed"
wait "$c2" || fail "client 2 failed"

exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect for get"
printf 'get hits\n' >&3
IFS= read -r -t 10 hits <&3 || fail "no reply to get"
exec 3>&-

kill -TERM "$spid"
wait "$spid"
status=$?
spid=
[ "$status" -eq 0 ] || fail "the server exited with status $status: $(cat "$tmp/err")"
if [ "$hits" != $((2 * n)) ]; then
	echo "load.sh: lost increments: hits $hits, expected $((2 * n))" >&2
	exit 1
fi
echo "hits $hits"
exit 0
