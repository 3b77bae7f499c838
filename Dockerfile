# mayday in a container, for batch engines (see docs/scale-out.md).
#
# mayday needs cgo: DuckDB is linked in as a static C++ library, so the binary depends only
# on glibc, libstdc++ and libgcc. The build stage is Debian 12 (bookworm) and the runtime
# stage distroless/cc-debian12, which ships exactly those libraries and nothing else: no
# shell, no package manager, a non-root user.
#
#   make image                 # docker (or podman) build --build-arg VERSION=$(git describe ...) -t mayday:VERSION .
#   mkdir -p runs
#   docker run --rm -u "$(id -u):$(id -g)" -v "$PWD/runs:/work/runs" mayday:VERSION run research-fleet
#
# The process runs as a non-root user, so a bind-mounted folder must be writable by it: -u
# runs it as you, the owner of ./runs. A named volume (-v mayday-runs:/work/runs) needs no
# -u: Docker fills a new one from /work/runs, which belongs to the image's user.

# Base images are pinned by digest, so a rebuild gets the bytes that were reviewed; the tag
# beside each digest says what it is. `make image-pins` prints the digests the tags point at
# today (it pulls them), for a deliberate bump; GO_IMAGE and RUNTIME_IMAGE override a pin
# (make image GO_IMAGE=docker.io/library/golang:1.26-bookworm for the tag as it moves). Names are
# written in full, as Podman wants them (it does not guess a registry for a short name).
ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f

FROM ${GO_IMAGE} AS build
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

FROM ${RUNTIME_IMAGE}
COPY --from=build /out/mayday /usr/local/bin/mayday
# The working folder and its runs folder belong to the nonroot user (65532), so the default
# `--out runs/...` is writable in the container and in a fresh named volume.
COPY --from=build --chown=65532:65532 /out/work /work
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/mayday"]
CMD ["--help"]
