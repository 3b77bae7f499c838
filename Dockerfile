# mayday in a container, for batch engines (see docs/scale-out.md).
#
# mayday needs cgo: DuckDB is linked in as a static C++ library, so the binary depends only
# on glibc, libstdc++ and libgcc. The build stage is Debian 12 (bookworm) and the runtime
# stage distroless/cc-debian12, which ships exactly those libraries and nothing else: no
# shell, no package manager, a non-root user.
#
#   make image                 # docker build --build-arg VERSION=$(git describe ...) -t mayday:VERSION .
#   mkdir -p runs
#   docker run --rm -u "$(id -u):$(id -g)" -v "$PWD/runs:/work/runs" mayday:VERSION run research-fleet
#
# The process runs as a non-root user, so a bind-mounted folder must be writable by it: -u
# runs it as you, the owner of ./runs. A named volume (-v mayday-runs:/work/runs) needs no
# -u: Docker fills a new one from /work/runs, which belongs to the image's user.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Dependencies first, so a code change does not download modules again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -tags duckdb_arrow \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/mayday ./cmd/mayday \
 && /out/mayday version \
 && mkdir -p /out/work/runs

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/mayday /usr/local/bin/mayday
# The working folder and its runs folder belong to the nonroot user (65532), so the default
# `--out runs/...` is writable in the container and in a fresh named volume.
COPY --from=build --chown=65532:65532 /out/work /work
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/mayday"]
CMD ["--help"]
