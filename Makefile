# replay: make demo runs the embedded demo, make test runs every test.
GO ?= go
DUCKDB := tools/duckdb/node_modules/@duckdb/node-api/package.json
BROWSER := tools/browser/node_modules/playwright-core/package.json

.PHONY: demo test test-race bench bench-scale pgo fuzz build clean check-sizes test-cluster cross lint prereqs image test-image

build:
	$(GO) build -o bin/replay ./cmd/replay

demo:
	$(GO) run ./cmd/replay

# The test command of the README and of CI. It first installs what the
# tests run beside Go (prereqs, and the npm packages), and a test whose
# program is missing then fails rather than skips (REPLAY_TEST_REQUIRE,
# package internal/testenv). The last line runs the packages with AVX-512
# loops again with them off: Go's loops beside them, as on a CPU without
# them (golang.org/x/sys/cpu reads GODEBUG).
test: export REPLAY_TEST_REQUIRE = 1
test: prereqs $(DUCKDB) $(BROWSER) check-sizes
	$(GO) vet ./...
	$(GO) test -race -timeout 20m ./trace/... ./engine/... ./shard/... ./columnar/...
	$(GO) test ./...
	GODEBUG=cpu.avx512f=off $(GO) test -count=1 ./trace/... ./engine/... ./columnar/...

# gofmt, staticcheck and deadcode (pinned releases, from the Go module
# proxy): nothing unformatted, no finding, no function that neither a
# command nor a test reaches.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE = golang.org/x/tools/cmd/deadcode@v0.52.0
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: not formatted:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...
	@out=$$($(GO) run $(DEADCODE) -test ./...); if [ -n "$$out" ]; then echo "deadcode:"; echo "$$out"; exit 1; fi

# go build for every OS and architecture the code is meant to build on,
# and go vet (which compiles the tests too) for one of each other OS: the
# OS-specific test files (*_linux_test.go, *_other_test.go) differ by OS,
# not by architecture.
CROSS_TARGETS = linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		echo "go build ./... for $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./...; \
	done
	@set -e; for t in windows/amd64 darwin/arm64; do \
		echo "go vet ./... (tests too) for $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./...; \
	done

$(DUCKDB): tools/duckdb/package.json tools/duckdb/package-lock.json
	npm ci --prefix tools/duckdb --no-audit --no-fund --loglevel=error

# zstd and Debian's chromium, through apt-get when root, when missing.
prereqs:
	bash tools/test-prereqs.sh

# playwright-core drives Debian's chromium (never a browser of its own) to
# render replay report's page in a test.
$(BROWSER): tools/browser/package.json tools/browser/package-lock.json
	npm ci --prefix tools/browser --no-audit --no-fund --loglevel=error

# The Slurm recipe (deploy/slurm/) on a real one-node Slurm cluster that
# tools/test-cluster.sh starts here and stops: as root; it installs Debian's
# slurm-wlm and munge when missing (about 20 s; 10 s more to install them).
test-cluster: $(DUCKDB)
	GO=$(GO) bash tools/test-cluster.sh

# The container image (Containerfile): a static replay (CGO_ENABLED=0, built
# here) on an empty base, so no image is downloaded; built by Debian's podman,
# with no daemon (tools/image.sh installs podman and runc when missing, as
# root). Publish it under your registry's name and push it:
#   make image REGISTRY=ghcr.io/you VERSION=v1.0.0 && podman push ghcr.io/you/replay:v1.0.0
# make test-image (as root) builds it, replays generated traces in it under
# podman (runc) into a mounted directory, runs the Kubernetes recipe's
# commands in it, and checks the tables with DuckDB against a host replay's.
REGISTRY ?= localhost
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE ?= $(REGISTRY)/replay:$(VERSION)
image:
	GO=$(GO) IMAGE=$(IMAGE) VERSION=$(VERSION) bash tools/image.sh build

test-image: $(DUCKDB)
	GO=$(GO) IMAGE=$(IMAGE) VERSION=$(VERSION) bash tools/image.sh test

# No tracked file over 1 MiB unless tools/large-fixtures.txt names it.
check-sizes:
	bash tools/check-sizes.sh

# Every figure of docs/PERFORMANCE.md in one run (sized for about 10
# minutes on the 2-core machine when quiet; 36 under a load average of
# 20): bench/run.sh builds bin/replay as go build does and
# times it end to end as a process (bench/e2e, best of 5), then runs the
# in-process benchmarks; the raw output goes to bench/latest.txt, and
# bench/report rewrites the page's figures from it. It installs zstd when
# missing (as root, through apt-get). A quick check of the harness, which
# prints the figures without touching the page:
#   BENCH_RUNS=2 REPLAY_BENCH_LANEOPS=3e5 BENCH_OUT=/tmp/q.txt make bench
BENCH_OUT ?= bench/latest.txt
bench: $(DUCKDB)
	GO=$(GO) BENCH_OUT=$(BENCH_OUT) bash bench/run.sh
	$(GO) run ./bench/report -new $(BENCH_OUT)

# The scaling of the split pipeline (replay split, the partition replays,
# replay merge), each task a process of its own run one after another: the
# predicted N-node speedup, the CPU of all tasks against one replay's, and
# the partitions' balance, for N = 2, 4, 8 and 16 (bench/scale/run.sh).
bench-scale:
	GO=$(GO) bash bench/scale/run.sh

# The PGO profile: a CPU profile of the lean replays of the uniform and
# histogram traces, copied beside the main package, where go build (and
# go install, go run) find it as default.pgo. The first go test only
# generates the traces (the pattern matches no replay), so that the profile
# holds the replays alone.
PGO_TRACES = $(CURDIR)/bin/pgo-traces
pgo:
	mkdir -p $(PGO_TRACES)
	REPLAY_BENCH_CACHE=$(PGO_TRACES) $(GO) test ./bench -pgo=off -count 1 -run '^$$' \
		-bench '^BenchmarkReplay$$/^(uniform-1Mi|histogram)$$/^none$$' -o bin/bench.test >/dev/null
	REPLAY_BENCH_CACHE=$(PGO_TRACES) $(GO) test ./bench -pgo=off -count 1 -run '^$$' \
		-bench '^BenchmarkReplay$$/^(uniform-1Mi|histogram)$$/^lean$$/' \
		-benchtime 5x -o bin/bench.test -cpuprofile profiles/default.pgo
	rm -rf $(PGO_TRACES) bin/bench.test
	cp profiles/default.pgo cmd/replay/default.pgo
	@ls -l profiles/default.pgo

fuzz:
	$(GO) test ./trace -run '^$$' -fuzz FuzzTextReader -fuzztime 60s
	$(GO) test ./trace -run '^$$' -fuzz FuzzBinaryReader -fuzztime 60s
	$(GO) test ./trace/accelsim -run '^$$' -fuzz FuzzAccelSimReader -fuzztime 60s
	$(GO) test ./trace/accelsim -run '^$$' -fuzz FuzzMemTraceReader -fuzztime 60s

clean:
	rm -rf bin demo.tables
