# The two commands a new machine needs: make run, make test.

GO := $(shell command -v go 2>/dev/null || ls /usr/local/go/bin/go 2>/dev/null)
BIN := bin/switchyard

.PHONY: build run test race bench bench-render bench-micro fuzz vet fmt check-go clean size release

check-go:
	@if [ -z "$(GO)" ]; then \
		echo "Go 1.26 or newer is required: install it from https://go.dev/dl and put its bin directory on PATH." >&2; \
		exit 1; \
	fi

# The version stamped into the binary (internal/version): the nearest
# tag, the commits since and the commit, and -dirty for uncommitted
# changes; the commit alone while the repository has no tag.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)

# -trimpath keeps the build machine's paths out of the binary; -s -w drop
# the symbol table and DWARF, which nothing reads at run time (stack
# traces and profiles name functions and lines from the pclntab, which
# stays). README.md, "Binary size", has what this saves.
LDFLAGS := -s -w -X github.com/switchyardhq/switchyard/internal/version.stamped=$(VERSION)

build: check-go
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/switchyard

run: build
	scripts/run.sh

# The binary's size against stock Caddy of the same version, built from
# the same go.mod with the same flags (README.md, "Binary size").
size: check-go
	scripts/size.sh

# Packages whose tests also run under the race detector: the limiter, the
# orchestrator, the tools and the stream parser. The renderers are
# single-threaded and slow under the detector, and packages that pull in
# Caddy or the S3 SDK would double a cold build; `make race` runs
# everything.
RACE_PKGS := ./policy/... ./translator/... ./internal/sse ./tools ./tools/toolset ./tools/artifacts ./tools/memory ./tools/search ./tools/openurl

# Unit, storage-contract, limiter and end-to-end suites against real
# PostgreSQL and Redis (started or installed by scripts/services.sh); the
# release image runs in podman (installed by scripts/podman.sh).
test: build
	scripts/services.sh
	scripts/browser.sh
	scripts/podman.sh
	$(GO) vet ./...
	SWITCHYARD_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 15m ./...
	$(GO) test -race -count=1 -timeout 10m $(RACE_PKGS)
	cd third_party/fpdf && $(GO) vet . && $(GO) test -race -count=1 .

race: build
	scripts/services.sh
	scripts/podman.sh
	SWITCHYARD_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 20m ./...

# The reference run (docs/performance.md); BENCH_QUICK=1 for a short one.
bench: build bench-render bench-micro
	scripts/services.sh
	$(GO) run ./bench

# Micro-benchmarks of the per-request path, with allocations.
bench-micro: check-go
	$(GO) test -run '^$$' -bench . -benchmem ./policy ./billing ./internal/tokenizer ./storage/sqlite
	$(GO) test -run '^$$' -bench 'StreamWriterSend' -benchmem ./translator

# Render times of every deliverable (Go benchmarks with allocations).
bench-render: check-go
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 10x ./tools/render/...

# Every fuzz target for FUZZTIME each (default 30s), then the billing
# invariant against the real binary for INVARIANT_DURATION per storage
# mode (default 10m; docs/security.md). Both run; either failing fails.
fuzz: build
	scripts/services.sh
	scripts/fuzz.sh; targets=$$?; scripts/invariant.sh; invariant=$$?; exit $$((targets | invariant))

# 1,000 streams through one node and a mixed load on two, for
# SOAK_DURATION each (default 10m); not part of make test.
soak: build
	scripts/services.sh
	scripts/soak.sh

# Static release binaries with the version stamp, the container image as
# a tarball for docker load (deploy/image: no daemon, no registry), and
# SHA256SUMS, all in dist/ (docs/operations.md, "Deploying").
release: check-go
	GO=$(GO) VERSION=$(VERSION) scripts/release.sh

vet: check-go
	$(GO) vet ./...

fmt: check-go
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin dist
