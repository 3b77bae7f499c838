# mayday in a container, for batch engines (see docs/scale-out.md).
#
# mayday needs cgo: DuckDB is linked in as a static C++ library, so the binary depends only
# on glibc, libstdc++ and libgcc. The build stage is Debian 12 (bookworm) and the runtime
# stage distroless/cc-debian12, which ships exactly those libraries and nothing else: no
# shell, no package manager, a non-root user.
#
#   docker build -t mayday .
#   docker run --rm -v "$PWD/runs:/work/runs" mayday run research-fleet

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
 && /out/mayday version

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/mayday /usr/local/bin/mayday
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/mayday"]
CMD ["--help"]
