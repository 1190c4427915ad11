#!/usr/bin/env bash
# Makes Docker usable for the nightly's end-to-end test (make docker-test)
# on a Debian/Ubuntu machine, only what is missing:
#   - Debian's docker.io (the engine) and debootstrap (the base image of
#     scripts/docker-images.sh);
#   - Compose v2 (`docker compose`), built from its Go module
#     (github.com/docker/compose/v2 at $COMPOSE_VERSION) into the CLI
#     plugin directory when the docker CLI has no compose command;
#   - a running engine: when `docker info` fails and this is root, dockerd
#     is started in the background (log: /var/log/mcpredict-dockerd.log).
# Fails with the reason when the engine cannot be started. Safe to run
# again. scripts/setup.sh calls it unless MCPREDICT_SETUP_DOCKER=0.
set -euo pipefail
cd "$(dirname "$0")/.."

COMPOSE_VERSION=${COMPOSE_VERSION:-v2.40.3}
log() { echo "docker-setup: $*" >&2; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v docker >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]} with apt-get"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! docker compose version >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    plugins=/usr/local/lib/docker/cli-plugins
  else
    plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
  fi
  log "building Compose $COMPOSE_VERSION from its Go module into $plugins"
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  # `go install module@version` refuses a module whose go.mod has exclude
  # directives, as Compose's has: build it as the main module instead.
  dir=$(cd "$src" && GOFLAGS=-mod=mod go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "cannot download github.com/docker/compose/v2@$COMPOSE_VERSION"; exit 1; }
  cp -r "$dir/." "$src/compose"
  chmod -R u+w "$src/compose"
  mkdir -p "$plugins"
  (cd "$src/compose" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
    -o "$plugins/docker-compose" ./cmd)
  docker compose version >&2
fi

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    log "no Docker engine answers ('docker info' fails) and this is not root: start dockerd (sudo dockerd &) or join the docker group"
    exit 1
  fi
  logfile=/var/log/mcpredict-dockerd.log
  log "starting dockerd (log: $logfile)"
  setsid nohup dockerd >"$logfile" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  if ! docker info >/dev/null 2>&1; then
    log "dockerd did not start in 30 s; the end of its log:"
    tail -20 "$logfile" >&2
    exit 1
  fi
fi
log "Docker $(docker info --format '{{.ServerVersion}}') ($(docker info --format '{{.Driver}}, {{.CgroupDriver}}')), $(docker compose version --short 2>/dev/null || echo compose)"
