# syntax=docker/dockerfile:1
# Build a static binary, then run it from a distroless image as non-root.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/incidex ./cmd/incidex \
    && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/incidex /usr/local/bin/incidex
# The data directory (SQLite database, search index, generated tokens),
# owned by the image's user: a new named volume copies this directory,
# owner included, so UID 65532 can write it. (distroless has no shell to
# mkdir or chown with, hence the empty directory from the build stage.)
COPY --from=build --chown=65532:65532 /out/data /data
# Listening on all interfaces needs ingest and admin tokens: without
# INCIDEX_INGEST_TOKEN / INCIDEX_ADMIN_TOKEN (or their _FILE forms), serve
# generates them into /data/tokens.json at the first start and prints them
# once (docker logs).
ENV INCIDEX_DATA=/data \
    INCIDEX_ADDR=0.0.0.0:8080 \
    INCIDEX_GENERATE_TOKENS=true \
    INCIDEX_LOG_FORMAT=json \
    INCIDEX_LOG_LEVEL=info
VOLUME ["/data"]
EXPOSE 8080
USER 65532:65532
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/incidex", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/incidex"]
CMD ["serve"]
