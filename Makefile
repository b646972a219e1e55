# NeoKV. `make run` starts a standalone server on 127.0.0.1:6379 with data in ./data;
# `make cluster` starts three local cluster nodes (7001-7003, data in ./data/node{1,2,3});
# `make test` runs every test of both crates (server and client/). They install missing system packages first.
CARGO ?= cargo
ARGS ?=

.PHONY: deps build run cluster test bench perf flamegraph fmt clean

deps:
	@./scripts/deps.sh

build: deps
	$(CARGO) build --release --bin neokv-server

run: build
	mkdir -p data
	$(CARGO) run --release --bin neokv-server -- --dir ./data --port 6379 $(ARGS)

# Three local nodes: clients on 127.0.0.1:7001-7003, data in ./data/node{1,2,3}.
cluster: build
	./scripts/cluster.sh "" $(ARGS)

# Both crates of the workspace: the server and the client library (client/).
# The server is built with its test hooks (the `failpoints` feature, src/failpoint.rs).
# Then each criterion bench (benches/) runs every benchmark once (criterion's
# test mode, about 20 s), so a bench that no longer compiles fails the tests.
test: deps
	$(CARGO) test --release --workspace --features neokv/failpoints -- --test-threads=2
	$(CARGO) test --release --workspace --features neokv/failpoints --bench '*'

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
