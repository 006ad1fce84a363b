# syntax=docker/dockerfile:1
# Build a static binary, then run it from a distroless image as non-root.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/incidex ./cmd/incidex

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/incidex /usr/local/bin/incidex
# The data directory (SQLite database and search index). UID 65532 owns it.
ENV INCIDEX_DATA=/data \
    INCIDEX_ADDR=0.0.0.0:8080 \
    INCIDEX_LOG_FORMAT=json \
    INCIDEX_LOG_LEVEL=info
VOLUME ["/data"]
EXPOSE 8080
USER 65532:65532
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/incidex", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/incidex"]
CMD ["serve"]
