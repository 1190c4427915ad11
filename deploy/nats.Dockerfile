# A NATS server image built from the nats-server module that mcpredict
# already depends on (the version of go.mod), for machines that cannot pull
# the official nats image: scripts/docker-images.sh builds it. Elsewhere
# docker-compose.yml uses the official image (NATS_IMAGE, default
# nats:2-alpine); both take the same command line.
ARG GO_IMAGE=golang:1.26-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags "-s -w" \
        -o /out/nats-server github.com/nats-io/nats-server/v2

FROM ${DEBIAN_IMAGE}
COPY --from=build /out/nats-server /usr/local/bin/nats-server
EXPOSE 4222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
