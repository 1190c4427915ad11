#!/usr/bin/env bash
# Makes local stand-ins for the base images of the Dockerfile and of
# docker-compose.yml, for a machine that reaches Debian's package mirror and
# the Go module proxy but no container registry. Where a registry is
# reachable, none of this is needed: the Dockerfile and the compose file use
# the official images by default.
#
#   scripts/docker-images.sh [--force] [--env FILE]
#
# Makes each image only if it is missing (--force: makes them again):
#   mcpredict-local/debian:bookworm-slim   `debootstrap --variant=minbase
#                                          bookworm`, imported with `docker
#                                          import` (needs root)
#   mcpredict-local/golang:1.26-bookworm   that image, ca-certificates, and
#                                          this machine's Go toolchain
#                                          (`go env GOROOT`, at least go.mod's
#                                          version)
#   mcpredict-local/nats:VERSION           nats-server built from the version
#                                          of the module in go.mod
#                                          (deploy/nats.Dockerfile)
# and writes FILE (default deploy/local-images.env) with GO_IMAGE,
# DEBIAN_IMAGE and NATS_IMAGE, which the compose file takes as build
# arguments and images:
#
#   docker compose --env-file deploy/local-images.env up -d --build
#
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."

force=0
envfile=deploy/local-images.env
while [ $# -gt 0 ]; do
  case "$1" in
  --force) force=1 ;;
  --env) envfile=$2; shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "docker-images.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "docker-images: $*" >&2; }
die() { log "$*"; exit 1; }

docker info >/dev/null 2>&1 || die "no Docker engine answers ('docker info' fails): start dockerd (scripts/dockerd.sh does, as root)"

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
debian=mcpredict-local/debian:bookworm-slim
golang=mcpredict-local/golang:1.26-bookworm
nats_version=$(go list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
nats=mcpredict-local/nats:${nats_version#v}

have() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if have "$debian"; then
  log "$debian exists"
else
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing (apt-get install debootstrap)"
  [ "$(id -u)" -eq 0 ] || die "debootstrap needs root"
  log "debootstrap --variant=minbase bookworm from $mirror"
  start=$(date +%s)
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  # The official image's sources: the release, its updates and security.
  rm -f "$work/rootfs/etc/apt/sources.list"
  cat >"$work/rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["bash"]' - "$debian" >/dev/null
  rm -rf "$work/rootfs"
  log "$debian made in $(($(date +%s) - start))s"
fi

if have "$golang"; then
  log "$golang exists"
else
  goroot=$(go env GOROOT)
  want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)
  have_go=$(go env GOVERSION)
  log "$golang: $have_go from $goroot (go.mod wants go $want)"
  mkdir -p "$work/go"
  cp "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$work/go/ca-certificates.crt"
  cat >"$work/go/Dockerfile" <<EOF
FROM $debian
RUN apt-get update \\
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates git \\
    && rm -rf /var/lib/apt/lists/*
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go /usr/local/go
ENV GOPATH=/go GOTOOLCHAIN=local PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF
  # The context: the Dockerfile and the toolchain, streamed as one tar.
  tar -c -C "$work/go" Dockerfile ca-certificates.crt -C "$(dirname "$goroot")" --transform "s,^$(basename "$goroot"),go," \
    --exclude "$(basename "$goroot")/pkg/obj" --exclude "$(basename "$goroot")/test" "$(basename "$goroot")" |
    DOCKER_BUILDKIT=0 docker build --network host -q -t "$golang" - >/dev/null
  docker run --rm "$golang" go version >&2
fi

if have "$nats"; then
  log "$nats exists"
else
  log "$nats from the nats-server module $nats_version"
  DOCKER_BUILDKIT=0 docker build --network host -q -f deploy/nats.Dockerfile \
    --build-arg GO_IMAGE="$golang" --build-arg DEBIAN_IMAGE="$debian" -t "$nats" . >/dev/null
fi

cat >"$envfile" <<EOF
# Local stand-ins for the official images (scripts/docker-images.sh):
#   docker compose --env-file $envfile up -d --build
GO_IMAGE=$golang
DEBIAN_IMAGE=$debian
NATS_IMAGE=$nats
EOF
log "wrote $envfile"
