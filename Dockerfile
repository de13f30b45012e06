# The service as a small static image: built with the same command CI tests
# (.ci/graphql-http-audit builds and runs this exact binary), run as a
# non-root user, the data folder a volume, healthy when /readyz says so.
# Base images by tag: pin each by digest where you build (FROM image:tag@sha256:…,
# from `docker buildx imagetools inspect IMAGE:TAG` or `crane digest IMAGE:TAG`);
# no registry was reachable where this file was written (docs/decisions.md).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The release and commit this image is (docker build --build-arg
# VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD)): what inventoryd
# --version and inventory_build_info say.
ARG VERSION=
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X github.com/propertyrecords/inventory/internal/buildinfo.version=${VERSION} -X github.com/propertyrecords/inventory/internal/buildinfo.commit=${COMMIT}" \
      -o /out/inventoryd ./cmd/inventoryd && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/inventoryd /inventoryd
COPY --from=build --chown=65532:65532 /out/data /data
# Header mode (the default INVENTORY_AUTH) on 0.0.0.0 refuses to start: run
# it with INVENTORY_AUTH=apikey or jwt, or with INVENTORY_BEHIND_GATEWAY=on
# behind a gateway that authenticates callers and sets X-Company-Id.
ENV INVENTORY_ADDR=0.0.0.0:8080 \
    INVENTORY_DATA_DIR=/data \
    INVENTORY_DEMO=off
VOLUME /data
EXPOSE 8080
USER nonroot
HEALTHCHECK --interval=10s --timeout=4s --start-period=30s CMD ["/inventoryd", "healthcheck"]
ENTRYPOINT ["/inventoryd"]
