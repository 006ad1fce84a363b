# incidex build, test and benchmark targets.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
FUZZTIME  ?= 20s
BENCHTIME ?= 2s
GO        ?= go

.PHONY: build test race fuzz bench golden lint clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o incidex ./cmd/incidex

# The test command (README, .ci/run).
test:
	$(GO) test -race -count=1 -cover ./...

# Run every fuzz target for FUZZTIME each (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$t"; \
	    $(GO) test -run "^$$" -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg >/dev/null || { echo "fuzz $$t failed: the crasher is in testdata/fuzz/$$t"; exit 1; }; \
	  done; \
	done

# Go benchmarks, then the end-to-end benchmark scripts (see BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...
	@if [ -x bench/run.sh ]; then bench/run.sh; fi

golden:
	UPDATE_GOLDEN=1 $(GO) test ./...

lint:
	test -z "$$(gofmt -l .)"
	$(GO) vet ./...

clean:
	rm -f incidex
