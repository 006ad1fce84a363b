# incidex build, test and benchmark targets.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
FUZZTIME  ?= 20s
BENCHTIME ?= 2s
GO        ?= go
# The image name for make image: your registry, e.g. ghcr.io/your-org/incidex:v1.2.
IMAGE     ?= incidex:$(VERSION)

.PHONY: build test race fuzz bench golden lint clean image

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o incidex ./cmd/incidex

# The test command (README, .ci/run).
test:
	$(GO) test -race -count=1 -cover ./...

# Run every fuzz target for FUZZTIME each (go test -fuzz takes one target at a time;
# FUZZTIME is a duration, or a count of inputs such as 2000x).
# Go's fuzz engine (1.26) fails runs on its own in two ways, and neither
# writes an input that fails: "context deadline exceeded" as a duration
# -fuzztime ends (golang/go#75804, fixed in Go 1.27; a count budget avoids
# it), and "fuzzing process hung or terminated unexpectedly" while
# minimizing an input that fails nothing (golang/go#52569, #56238). A real
# failure writes an input that fails again when run as a plain test: only
# that fails the target. Other reports are named and their inputs removed.
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$t"; \
	    if $(GO) test -run "^$$" -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg >$$log 2>&1; then continue; fi; \
	    input=$$(grep -o "testdata/fuzz/$$t/[0-9a-f]*" $$log | head -1); \
	    if [ -z "$$input" ] && grep -q 'context deadline exceeded' $$log; then \
	      echo "  $$t: the fuzz engine's deadline error, no failing input (golang/go#75804): not a failure"; \
	      continue; \
	    fi; \
	    if [ -n "$$input" ] && $(GO) test -count=1 -run "^$$t$$" $$pkg >/dev/null 2>&1; then \
	      echo "  $$t: the fuzz engine reported $$input ($$(grep -m1 -o 'fuzzing process[^:]*' $$log || echo 'a failure')), which passes when run again: not a failure"; \
	      rm -f "$$dir/$$input"; rmdir "$$dir/testdata/fuzz/$$t" "$$dir/testdata/fuzz" 2>/dev/null || true; \
	      continue; \
	    fi; \
	    cat $$log; echo "fuzz $$t failed: the crasher is in testdata/fuzz/$$t"; exit 1; \
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

# Print the commands that build the container image, push it, and point
# deploy/kubernetes.yaml at it (no Docker engine is assumed here).
image:
	@echo "# build and push $(IMAGE) (set IMAGE=registry/name:tag):"
	@echo "docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) ."
	@echo "docker push $(IMAGE)"
	@echo "# then use it in the manifest:"
	@echo "sed -i 's|image: incidex:dev|image: $(IMAGE)|' deploy/kubernetes.yaml"
	@echo "# or, on kind without a registry: kind load docker-image $(IMAGE)"

clean:
	rm -f incidex
