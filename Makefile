# dblat — the two commands that matter on a fresh machine:
#   make quickstart   set up, build, and run the embedded default (managed PostgreSQL, TPC-C)
#   make test         set up, and run the tests against real managed servers
GO      ?= go
BIN     := bin/dblat
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/dblat/dblat/internal/sysinfo.version=$(VERSION)

.PHONY: all setup build test quickstart bench bench-all clients vet lint clean

all: build

setup:
	@./scripts/setup.sh

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dblat

# Servers the tests need must be there: DBLAT_REQUIRE_SERVERS=1 turns a skip into a failure.
# Packages run side by side (go test's default, one per CPU) and so do the tests of a
# package that use servers of their own: every test asserts what the code guarantees,
# whatever else the machine runs, and its runs' windows overlap instead of adding up.
test: setup vet lint
	DBLAT_REQUIRE_SERVERS=1 $(GO) test -count=1 -timeout 30m ./...

vet:
	$(GO) vet ./...

# golangci-lint (pinned by scripts/setup.sh; .golangci.yml): correctness linters, functions
# of at most 120 lines, no duplicated blocks.
lint: setup
	bin/golangci-lint run ./...

quickstart: setup build
	./$(BIN) quickstart

# The figures the documentation quotes, each in the configuration it quotes, one after
# another, with where it is quoted and its reference (scripts/bench.sh --list);
# FIGURE=name runs one (or FIGURE="a b" several). Run it alone: the figures are timings.
FIGURE ?=
bench: setup
	DBLAT_REQUIRE_SERVERS=1 GO=$(GO) ./scripts/bench.sh $(FIGURE)

# Every benchmark once, quoted or not (what make bench ran before the figures were listed).
bench-all: setup
	DBLAT_REQUIRE_SERVERS=1 $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

# The client matrix (clients/): installs the Python, Node and Java client libraries under a
# cache directory when missing (scripts/clients.sh), runs every client through dblat proxy
# against managed servers, checks counts, round trips and replays, compares predictions
# with measurements at +2 and +20 ms, and prints the compatibility table (bin/clients.md;
# the test's log in bin/clients.log). Run it alone: the predictions are timings.
clients: setup
	@mkdir -p bin
	@cache=$$(./scripts/clients.sh | tail -n 1) && \
	echo "clients: running the matrix (log: bin/clients.log)" && \
	DBLAT_REQUIRE_SERVERS=1 DBLAT_CLIENTS=all DBLAT_CLIENTS_PREDICT=1 DBLAT_CLIENTS_CACHE="$$cache" \
	DBLAT_CLIENTS_TABLE=$(CURDIR)/bin/clients.md $(GO) test -count=1 -timeout 60m -v -run '^TestClients$$' ./clients/ \
		>bin/clients.log 2>&1; status=$$?; \
	grep -E '^(--- |\s+--- )(FAIL|SKIP)' bin/clients.log; \
	cat bin/clients.md 2>/dev/null; tail -n 1 bin/clients.log; exit $$status

clean:
	rm -rf bin
