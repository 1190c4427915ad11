# mcpredict: the prediction service, its workers and the nightly scheduler
# all run this image (see docker-compose.yml and docs/service.md).

# Build stage: a static binary (modernc.org/sqlite is pure Go, no cgo).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=docker
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/mcpredict ./cmd/mcpredict

# Runtime stage: Spin, and gcc with the C library headers that Spin's
# verifiers (pan.c) are compiled against; curl for health checks.
FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        spin gcc libc6-dev curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/mcpredict /usr/local/bin/mcpredict
# The entry scripts are the ones CI runs (service/e2e).
COPY deploy/ /usr/local/share/mcpredict/deploy/
RUN mkdir -p /data /traces /reports
ENV MCPREDICT_DATA=/data
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/share/mcpredict/deploy/serve.sh"]
