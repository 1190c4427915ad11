#!/bin/sh
# Nightly prediction: submits every trace under $TRACES to the mcpredict
# server and keeps the reports under $REPORTS/<UTC time>/ (one JSON and one
# text report per trace, summary.json, summary.txt), compared with the
# previous run, which $REPORTS/latest points to: new and fixed bugs by their
# stable ids. Entry point of the scheduler container; CI runs this same
# script against a real server (service/e2e).
#
#   nightly.sh          run every night at $NIGHTLY_AT (UTC), for ever
#   nightly.sh --once   run one batch now and exit with its status:
#                       0 no new bug, 1 new bugs, 2 bad traces, 3 failure
#
# Environment:
#   MCPREDICT         the mcpredict binary (default: mcpredict in PATH)
#   MCPREDICT_SERVER  the server's URL (default http://server:8080)
#   MCPREDICT_TOKEN   API bearer token, if the server wants one
#   TRACES            directory of traces (default /traces)
#   REPORTS           directory of the nightly reports (default /reports)
#   NIGHTLY_AT        time of day, UTC, HH:MM (default 02:00)
#   NIGHTLY_AT_START  1: also run once when the container starts
#   NIGHTLY_FLAGS     more `mcpredict batch` flags, e.g. "--engine native"
#   NIGHTLY_REPRODUCE 1: check the traces here with `batch --reproduce`
#                     instead of on the server: each trace's recorded program
#                     is run again under directed schedules (it must be at
#                     its recorded path in this container), and the reports
#                     say which bugs failed
#                     server: the same on the server (`batch --server
#                     --reproduce`): the server runs the programs, which must
#                     be at their recorded paths there and under one of its
#                     `serve --allow-reproduce` directories
set -eu
MCPREDICT=${MCPREDICT:-mcpredict}
SERVER=${MCPREDICT_SERVER:-http://server:8080}
TRACES=${TRACES:-/traces}
REPORTS=${REPORTS:-/reports}
AT=${NIGHTLY_AT:-02:00}

log() { echo "nightly: $*" >&2; }

# wait_server waits up to two minutes for the server's /healthz.
wait_server() {
	i=0
	while ! curl -fsS -o /dev/null "$SERVER/healthz" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -ge 240 ]; then
			log "server $SERVER not healthy after 2 minutes"
			return 3
		fi
		sleep 0.5
	done
}

run_once() {
	if [ "${NIGHTLY_REPRODUCE:-0}" != 1 ]; then
		wait_server || return 3
	fi
	mkdir -p "$REPORTS"
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	n=1
	while [ -e "$REPORTS/$stamp" ]; do # two runs in one second (tests)
		n=$((n + 1))
		stamp=$(date -u +%Y%m%dT%H%M%SZ)-$n
	done
	out="$REPORTS/$stamp"
	case "${NIGHTLY_REPRODUCE:-0}" in
	1) set -- --reproduce --out-dir "$out" --formats text --quiet ;;
	server) set -- --server "$SERVER" --reproduce --out-dir "$out" --formats text --quiet ;;
	*) set -- --server "$SERVER" --out-dir "$out" --formats text --quiet ;;
	esac
	if [ -f "$REPORTS/latest/summary.json" ]; then
		# The night itself, not the link, so that the summary names it.
		set -- "$@" --previous "$REPORTS/$(readlink "$REPORTS/latest")"
	fi
	log "checking $TRACES into $out"
	status=0
	# shellcheck disable=SC2086 # NIGHTLY_FLAGS is a list of flags
	# Its summary (summary.txt) goes to the log with the rest.
	"$MCPREDICT" batch "$@" ${NIGHTLY_FLAGS:-} "$TRACES" >&2 || status=$?
	# A batch that ran to its end is the base of the next comparison, also
	# with new bugs (1) or bad traces (2), which it records.
	if [ -f "$out/summary.json" ] && [ "$status" -le 2 ]; then
		ln -sfn "$stamp" "$REPORTS/latest"
	fi
	log "done, status $status"
	return "$status"
}

if [ "${1:-}" = "--once" ]; then
	status=0
	run_once || status=$?
	exit "$status"
fi
if [ "${NIGHTLY_AT_START:-0}" = 1 ]; then
	run_once || true
fi
while :; do
	now=$(date -u +%s)
	next=$(date -u -d "today $AT" +%s)
	if [ "$next" -le "$now" ]; then
		next=$(date -u -d "tomorrow $AT" +%s)
	fi
	log "next run at $(date -u -d "@$next" +%Y-%m-%dT%H:%MZ)"
	sleep $((next - now))
	run_once || true
done
