# dblat — the two commands that matter on a fresh machine:
#   make quickstart   set up, build, and run the embedded default (managed PostgreSQL, TPC-C)
#   make test         set up, and run the tests against real managed servers
GO      ?= go
BIN     := bin/dblat
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/dblat/dblat/internal/sysinfo.version=$(VERSION)

.PHONY: all setup build test quickstart bench bench-all vet clean

all: build

setup:
	@./scripts/setup.sh

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dblat

# Servers the tests need must be there: DBLAT_REQUIRE_SERVERS=1 turns a skip into a failure.
# Packages run side by side (go test's default, one per CPU) and so do the tests of a
# package that use servers of their own: every test asserts what the code guarantees,
# whatever else the machine runs, and its runs' windows overlap instead of adding up.
test: setup vet
	DBLAT_REQUIRE_SERVERS=1 $(GO) test -count=1 -timeout 30m ./...

vet:
	$(GO) vet ./...

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

clean:
	rm -rf bin
