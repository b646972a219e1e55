# NeoKV. `make run` starts a standalone server on 127.0.0.1:6379 with data in ./data;
# `make test` runs every test. Both install missing system packages first.
CARGO ?= cargo
ARGS ?=

.PHONY: deps build run test bench perf flamegraph fmt clean

deps:
	@./scripts/deps.sh

build: deps
	$(CARGO) build --release --bin neokv-server

run: build
	mkdir -p data
	$(CARGO) run --release --bin neokv-server -- --dir ./data --port 6379 $(ARGS)

test: deps
	$(CARGO) test --release -- --test-threads=2

bench: deps
	$(CARGO) bench

perf: build
	./perf/compare.sh

flamegraph: build
	./perf/flamegraph.sh

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
