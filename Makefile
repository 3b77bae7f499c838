# mayday: build, run, test, bench. DuckDB's Arrow interface needs cgo and the duckdb_arrow tag.
GO      ?= go
TAGS    := duckdb_arrow
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
BIN     := bin/mayday
# Packages that never link DuckDB (. holds the tests of the layering in docs/architecture.md,
# of function length and of RACE below).
PURE    := . ./recovery/... ./sim/... ./scenarios/... ./traces/... ./metric/... ./secret/... ./deploy/... ./fit/... ./internal/...
# The packages of PURE that start goroutines (a go statement or t.Parallel, in their code or
# their tests) are tested once more under the race detector; in the others it has no two
# goroutines to watch, and only multiplied their time (70 s of a make test's wall time on
# two cores, against 24 s now). TestRaceCoversConcurrentPackages fails when a package that
# starts goroutines is missing here.
RACE    := ./sim/record/...
CGO_ENABLED := 1
export CGO_ENABLED

.PHONY: build run image image-push image-pins container-check test race vet bench bench-commands bench-simpy simpy-note bench-memory fuzz mutate mutate-sql check clean

build:
	$(GO) build -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/mayday

# The main job: simulate the embedded default scenario and print its metrics.
run: build
	./$(BIN) run research-fleet --force

# The container image (see docs/scale-out.md), tagged with the same version the binary is
# stamped with, so a pinned reference names one build. IMAGE is the repository to tag
# (ghcr.io/you/mayday to push there); PLATFORMS=linux/amd64,linux/arm64 builds several
# platforms (docker buildx, or a podman manifest), which must then push (image-push), as a
# local image store holds one. CONTAINER is the engine: docker when it is on the PATH, else
# podman (CONTAINER=podman make image to choose). GO_IMAGE and RUNTIME_IMAGE replace the base
# images the Dockerfile pins by digest; image-pins prints the digests their tags have today.
IMAGE     ?= mayday
PLATFORMS ?=
IMAGE_REF  = $(IMAGE):$(VERSION)
CONTAINER ?= $(notdir $(firstword $(shell command -v docker 2>/dev/null) $(shell command -v podman 2>/dev/null)))
GO_IMAGE      ?=
RUNTIME_IMAGE ?=
BASE_TAGS      = docker.io/library/golang:1.26-bookworm gcr.io/distroless/cc-debian12:nonroot
IMAGE_ARGS     = --build-arg VERSION=$(VERSION) $(if $(GO_IMAGE),--build-arg GO_IMAGE=$(GO_IMAGE)) \
                 $(if $(RUNTIME_IMAGE),--build-arg RUNTIME_IMAGE=$(RUNTIME_IMAGE))

container-check:
	@[ -n "$(CONTAINER)" ] || { echo "image: neither docker nor podman is on the PATH (CONTAINER=... names another)" >&2; exit 2; }

image: container-check
ifeq ($(PLATFORMS),)
	$(CONTAINER) build $(IMAGE_ARGS) -t $(IMAGE_REF) .
else ifeq ($(CONTAINER),podman)
	podman build --platform $(PLATFORMS) $(IMAGE_ARGS) --manifest $(IMAGE_REF) .
else
	$(CONTAINER) buildx build --platform $(PLATFORMS) $(IMAGE_ARGS) -t $(IMAGE_REF) .
endif
	@echo "built $(IMAGE_REF) with $(CONTAINER)"

# A -dirty version names no one build, so it is not pushed.
image-push: container-check
	@case "$(VERSION)" in *dirty*) echo "image-push: version $(VERSION) has uncommitted changes; commit first" >&2; exit 2;; esac
ifeq ($(PLATFORMS),)
	$(MAKE) image
	$(CONTAINER) push $(IMAGE_REF)
else ifeq ($(CONTAINER),podman)
	$(MAKE) image
	podman manifest push --all $(IMAGE_REF) docker://$(IMAGE_REF)
else
	$(CONTAINER) buildx build --platform $(PLATFORMS) $(IMAGE_ARGS) -t $(IMAGE_REF) --push .
endif
	@echo "pushed $(IMAGE_REF); pin it in deploy/kubernetes/kustomization.yaml:"
	@echo "    newName: $(IMAGE)"
	@echo "    newTag: $(VERSION)"

# The digests the base images' tags point at today (pulls them; needs the network), to
# paste into the Dockerfile's ARG lines as a reviewed bump.
image-pins: container-check
	@for t in $(BASE_TAGS); do \
	  $(CONTAINER) pull -q $$t >/dev/null || exit 1; \
	  echo "$$t -> $$($(CONTAINER) image inspect --format '{{index .RepoDigests 0}}' $$t)"; \
	done

# The packages that link DuckDB are listed longest first (cmd/mayday, then analysis): go test
# starts them in that order, two at a time on two cores, so the longest do not start last.
# Their many small databases run with one DuckDB thread each (MAYDAY_DUCKDB_THREADS): the
# second thread's hand-offs cost a fifth of their CPU and gained them nothing.
test: vet
	$(GO) test -count=1 -timeout 30m $(PURE)
	$(GO) test -race -count=1 -timeout 30m $(RACE)
	MAYDAY_DUCKDB_THREADS=1 $(GO) test -tags $(TAGS) -count=1 -timeout 30m ./cmd/... ./analysis/... ./reports/... ./pipeline/... ./tune/... ./hunt/...

# The DuckDB packages' concurrency under the race detector, outside make test (about 2.5
# minutes on two cores): a run's load (its lanes, the views a new database defines on a
# goroutine of its own), the import's read-ahead, its JSON decoders and the parts it builds
# while the last loads, and sweeps that simulate while earlier runs commit. Run it when
# changing any of them.
RACE_DUCKDB := ^(TestRoundTrip|TestCancelledLoadIsPartial|TestFailedLoadKeepsNothing|TestFailedLoadAfterEarlyCommitsKeepsNothing|TestFailedCommitKeepsNothing|TestAbandonKeepsNothing|TestViewsDefinedWhileLoading|TestImport.*|TestSpilledImport.*|TestHostile.*|TestFastProto.*|TestDecodedRequestsInOrder|TestManyProtoBodiesImportAsJSON|TestBatch.*|TestSerial.*)$$
race:
	$(GO) test -race -tags $(TAGS) -count=1 -timeout 30m -run '$(RACE_DUCKDB)' ./analysis/ ./pipeline/

vet:
	$(GO) vet -tags $(TAGS) ./...

# Benchmarks report domain units (events/s, rows/s, ns/decision, runs/s); run several times
# and compare medians (benchstat) on a quiet machine. bench-commands times whole commands.
# The peak-memory benchmarks (bench-memory) run last, each in a process of its own.
bench: simpy-note
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -skip PeakMemory -benchmem -count $${COUNT:-3} ./recovery/... ./sim/... ./traces/... ./analysis/... ./pipeline/... ./reports/...
	$(MAKE) bench-memory

# Whole commands as processes (cmd/mayday BenchmarkCommands: run, run --no-trace, the M/M/8
# peer model against SimPy, sweep, check --all, report, the metrics view, import and export
# in both encodings), each paired with its reference in the same run, A B A B ...; PAIRS
# pairs each (default 5), BENCH=sweep (a regexp) for some.
# Long (about 5 minutes on a quiet 2-core machine): not part of `make bench`. See
# docs/performance.md.
bench-commands: simpy-note
	$(GO) test -tags $(TAGS) -run '^$$' -bench "Commands/$${BENCH:-.}" -benchtime $${PAIRS:-5}x -count 1 -timeout 2h ./cmd/mayday/

# BenchmarkSimPy runs one queueing model in SimPy and in mayday side by side; it needs
# python3 with SimPy (apt-get install python3-simpy python3-simpy3; MAYDAY_PYTHON names
# another interpreter) and skips without it. bench-simpy runs it alone.
bench-simpy: simpy-note
	$(GO) test -tags $(TAGS) -run '^$$' -bench SimPy -count $${COUNT:-5} ./analysis/

simpy-note:
	@for p in "$$MAYDAY_PYTHON" python3 /usr/bin/python3; do \
	  [ -n "$$p" ] && { $$p -c 'import simpy' || $$p -c 'import SimPy.Simulation'; } >/dev/null 2>&1 && exit 0; \
	done; echo "note: no python3 with SimPy, so BenchmarkSimPy will skip: apt-get install python3-simpy python3-simpy3"

# Peak memory of 100,000-investigation runs (shipped arrival rate, tenfold with capacity
# scaled, tenfold on the shipped capacity); each alone in its process, since each reads the
# process's high-water mark, and each fails above 1 GiB. Part of `make bench`.
bench-memory:
	$(GO) test -tags $(TAGS) -c -o bin/pipeline.test ./pipeline/
	for b in PeakMemory100k PeakMemory100kTenfold PeakMemory100kOverload; do \
		./bin/pipeline.test -test.run '^$$' -test.bench "^Benchmark$$b\$$" -test.benchtime 1x || exit 1; \
	done

# Short fuzzes of the scenario parser and of the simulator (generated valid scenarios run
# with the invariant checker on); their seed corpora also run in `make test`.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $${FUZZTIME:-30s} -fuzzminimizetime 5s ./scenarios
	$(GO) test -run '^$$' -fuzz FuzzSimulate -fuzztime $${FUZZTIME:-30s} -fuzzminimizetime 5s ./sim

# Mutation testing (docs/testing.md): gremlins mutates each package's code one change at a
# time and runs its tests; a mutant the tests miss "lived". One package at a time, niced;
# reports in bin/mutate/ (<pkg>.txt, <pkg>.json, summary.txt). PKG=./recovery make mutate
# for one package. Slow (the simulator takes many minutes): not part of `make test`.
GREMLINS_VERSION := v0.6.0
GREMLINS := bin/gremlins-$(GREMLINS_VERSION)
PKG ?= ./recovery ./scenarios ./traces ./sim ./secret ./metric/compute ./metric/detect ./fit ./hunt ./analysis
# Packages that link DuckDB, built with -tags $(TAGS).
MUTATE_DUCKDB := ./hunt ./analysis
# In ./analysis only the import mapping is mutated (the files matching this regexp, every
# other file and subfolder excluded), against its own fast tests (MUTATE_ANALYSIS_RUN,
# passed to go test through GOFLAGS): the whole analysis suite takes many minutes a mutant.
MUTATE_ANALYSIS_FILES ?= ^(import_conv.*|import_spans|import_build)\.go$$
MUTATE_ANALYSIS_RUN ?= ^Test(Convention|Mapping|FailureClass|ImportLibraryFixtures)
# No --test-cpu: gremlins v0.6.0 passes it to go test as the single argument "-cpu N", which
# every test binary refuses, so every mutant would be reported killed.
MUTATE_FLAGS ?= --workers 2 --timeout-coefficient 60
# Files gremlins leaves alone (a regexp): traces/tracetest makes synthetic records for other
# packages' tests and has no tests of its own.
MUTATE_EXCLUDE ?= tracetest/

$(GREMLINS):
	mkdir -p bin/gobin
	GOBIN=$(CURDIR)/bin/gobin $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	mv bin/gobin/gremlins $@

mutate: $(GREMLINS)
	@case " $(MUTATE_FLAGS) " in *--test-cpu*) \
	  echo "MUTATE_FLAGS: --test-cpu makes gremlins $(GREMLINS_VERSION) report every mutant killed" >&2; exit 2;; esac
	mkdir -p bin/mutate
	@for p in $(PKG); do \
	  n=$$(echo $$p | sed 's|^\./||; s|/\.\.\.$$||; s|/|-|g'); \
	  echo "== gremlins on $$p (bin/mutate/$$n.txt)"; \
	  start=$$(date +%s); goflags=-vet=off; extra=; \
	  case " $(MUTATE_DUCKDB) " in *" $$p "*) extra="--tags $(TAGS)";; esac; \
	  if [ "$$p" = ./analysis ]; then \
	    others=$$(ls analysis/*.go | sed 's|.*/||' | grep -v '_test\.go$$' | grep -Ev '$(MUTATE_ANALYSIS_FILES)' | sed 's/\.go$$//' | paste -sd'|'); \
	    extra="$$extra -E / -E ^($$others)\.go$$"; goflags="$$goflags -run=$(MUTATE_ANALYSIS_RUN)"; \
	  fi; \
	  GOFLAGS="$$goflags" nice -n 19 ./$(GREMLINS) unleash $(MUTATE_FLAGS) --exclude-files '$(MUTATE_EXCLUDE)' $$extra -o bin/mutate/$$n.json $$p > bin/mutate/$$n.txt 2>&1 || exit 1; \
	  { echo "$$p ($$(( $$(date +%s) - start )) s, $(GREMLINS_VERSION) $(MUTATE_FLAGS))"; \
	    grep -E 'Killed:|Timed out:|Test efficacy:|Mutator coverage:' bin/mutate/$$n.txt | sed 's/^ */  /'; } | tee bin/mutate/$$n.summary; \
	done; cat bin/mutate/*.summary > bin/mutate/summary.txt

# Mutation testing of the metric SQL: every view file mutated one change at a time, each
# mutant checked against the Go reference computations (analysis/mutate_sql_test.go).
mutate-sql:
	mkdir -p bin/mutate
	MAYDAY_MUTATE_SQL=$(CURDIR)/bin/mutate/sql.txt $(GO) test -tags $(TAGS) -count=1 -timeout 2h -run '^TestViewMutants$$' ./analysis/

# The project gates itself the way its users will: every embedded scenario's expectations.
check: build
	./$(BIN) check --all

clean:
	rm -rf bin runs
	$(GO) clean -testcache
