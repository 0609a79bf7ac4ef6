# replay: make demo runs the embedded demo, make test runs every test.
GO ?= go
DUCKDB := tools/duckdb/node_modules/@duckdb/node-api/package.json

.PHONY: demo test test-race bench fuzz build clean check-sizes

build:
	$(GO) build -o bin/replay ./cmd/replay

demo:
	$(GO) run ./cmd/replay

# The test command of the README and of CI.
test: $(DUCKDB) check-sizes
	$(GO) vet ./...
	$(GO) test -race ./trace/... ./engine/... ./shard/...
	$(GO) test ./...

$(DUCKDB): tools/duckdb/package.json tools/duckdb/package-lock.json
	npm ci --prefix tools/duckdb --no-audit --no-fund --loglevel=error

# No tracked file over 1 MiB unless tools/large-fixtures.txt names it.
check-sizes:
	bash tools/check-sizes.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./bench/ ./shard/ ./engine/ | tee bench/latest.txt

fuzz:
	$(GO) test ./trace -run '^$$' -fuzz FuzzTextReader -fuzztime 60s
	$(GO) test ./trace -run '^$$' -fuzz FuzzBinaryReader -fuzztime 60s

clean:
	rm -rf bin demo.tables
