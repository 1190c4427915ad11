#!/bin/sh
# Entry point of the mcpredict worker container (docker compose up
# --scale worker=N); CI starts the workers of its service tests with this
# same script.
#
# Environment:
#   MCPREDICT       the mcpredict binary (default: mcpredict in PATH)
#   MCPREDICT_NATS  NATS URL of the work queue (required)
# Further arguments are passed to `mcpredict worker` (see mcpredict worker -h).
set -eu
: "${MCPREDICT_NATS:?set MCPREDICT_NATS to the NATS URL of the work queue}"
exec "${MCPREDICT:-mcpredict}" worker --nats "$MCPREDICT_NATS" "$@"
