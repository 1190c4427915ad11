#!/bin/sh
# Entry point of the mcpredict server container; CI starts the server of its
# service tests with this same script.
#
# Environment:
#   MCPREDICT        the mcpredict binary (default: mcpredict in PATH)
#   MCPREDICT_ADDR   HTTP listen address (default 0.0.0.0:8080)
#   MCPREDICT_DATA   data directory: job database, stored traces (default /data)
#   MCPREDICT_NATS   NATS URL of the work queue; empty: check on this server
#   MCPREDICT_TOKEN  API bearer token; empty: no authentication
#   MCPREDICT_BIND   the host address docker-compose.yml publishes the API on
#                    (default 127.0.0.1); any but loopback needs a token
#                    (MCPREDICT_TOKEN or --token-file)
#   MCPREDICT_ACK_WAIT  with NATS: redeliver a model whose worker is silent
#                    this long (default 30s; see serve --ack-wait)
# Further arguments are passed to `mcpredict serve` (see mcpredict serve -h).
set -eu
token=${MCPREDICT_TOKEN:-}
for a in "$@"; do
	case "$a" in -token-file* | --token-file*) token=file ;; esac
done
case "${MCPREDICT_BIND:-127.0.0.1}" in
127.0.0.1 | localhost | ::1 | "[::1]") ;;
*)
	if [ -z "$token" ]; then
		echo "serve.sh: the API would be published on $MCPREDICT_BIND without a token: set MCPREDICT_TOKEN (or pass --token-file FILE), or MCPREDICT_BIND=127.0.0.1" >&2
		exit 2
	fi
	;;
esac
set -- --addr "${MCPREDICT_ADDR:-0.0.0.0:8080}" --data "${MCPREDICT_DATA:-/data}" "$@"
if [ -n "${MCPREDICT_NATS:-}" ]; then
	set -- --nats "$MCPREDICT_NATS" --ack-wait "${MCPREDICT_ACK_WAIT:-30s}" "$@"
fi
exec "${MCPREDICT:-mcpredict}" serve "$@"
