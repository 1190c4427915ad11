# mcpredict: the prediction service, its workers and the nightly scheduler
# all run this image (see docker-compose.yml and docs/service.md).
#
# The base images are the official ones by default. Where no container
# registry is reachable, scripts/docker-images.sh makes local stand-ins from
# Debian's packages and passes them as build arguments:
#   docker build --build-arg GO_IMAGE=... --build-arg DEBIAN_IMAGE=... .
ARG GO_IMAGE=golang:1.26-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim

# Build stage: a static binary (modernc.org/sqlite is pure Go, no cgo).
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=docker
RUN CGO_ENABLED=0 go build -buildvcs=false -trimpath \
        -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/mcpredict ./cmd/mcpredict

# Runtime stage: Spin, gcc with the C library headers that Spin's verifiers
# (pan.c) are compiled against, tcc (compiles them about 20x faster; used
# when installed), curl for health checks and the nightly script.
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        spin gcc libc6-dev tcc curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/mcpredict /usr/local/bin/mcpredict
# The entry scripts are the ones CI runs (service/e2e, make docker-test).
COPY deploy/ /usr/local/share/mcpredict/deploy/
RUN mkdir -p /data /traces /reports
ENV MCPREDICT_DATA=/data
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/share/mcpredict/deploy/serve.sh"]
