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
#   MCPREDICT_ACK_WAIT  with NATS: redeliver a model whose worker is silent
#                    this long (default 30s; see serve --ack-wait)
# Further arguments are passed to `mcpredict serve` (see mcpredict serve -h).
set -eu
set -- --addr "${MCPREDICT_ADDR:-0.0.0.0:8080}" --data "${MCPREDICT_DATA:-/data}" "$@"
if [ -n "${MCPREDICT_NATS:-}" ]; then
	set -- --nats "$MCPREDICT_NATS" --ack-wait "${MCPREDICT_ACK_WAIT:-30s}" "$@"
fi
exec "${MCPREDICT:-mcpredict}" serve "$@"
