# credwatch — make targets. `make demo` and `make test` are all a new user needs.
SHELL := /bin/bash
GO ?= go
BIN := bin/credwatch
LAB_CACHE ?= $(CURDIR)/.lab-cache
export CREDWATCH_LAB_BIN := $(LAB_CACHE)/bin
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOTEST_FLAGS ?=
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/credwatch/credwatch/internal/cli.version=$(VERSION) -X github.com/credwatch/credwatch/internal/cli.commit=$(COMMIT)
# The release binary: no symbol table or DWARF (-s -w), no build-machine paths (-trimpath).
RELEASE_FLAGS := -trimpath -ldflags "-s -w $(LDFLAGS)"

.PHONY: deps all build binsize install image image-push test test-under-load lint unit integration every-scenario lab-binaries bench bench-logs soak demo demo-offline fuzz clean \
	test-deploy docs runbook-capture krew-manifest release-check release-snapshot

# Separate Go modules under hack/ that test what ships, with their heavy tools kept out of go.mod:
# the Helm chart (helm lint, render, server-side dry-run on a lab), its alert rules (promtool
# test rules) and the krew manifest (krew's validator).
DEPLOY_MODULES := hack/krew hack/promtool hack/helm

all: build

build:
	CGO_ENABLED=0 $(GO) build $(RELEASE_FLAGS) -o $(BIN) ./cmd/credwatch

# The release binary stays at most 60 MB (issue 21) and links no template executor (pkg/markup).
binsize: build
	hack/binsize.sh $(BIN)

# The OCI image (linux/amd64 + linux/arm64, from scratch + CA bundle, non-root) as an OCI layout
# tarball; no container daemon; the same commit gives the same digest.
image:
	GO=$(GO) VERSION=$(VERSION) COMMIT=$(COMMIT) hack/image.sh bin/credwatch-image.tar

# Push that image to REGISTRY (host:port[/path]) as REGISTRY/credwatch:<the chart's appVersion>, the
# tag the chart pulls by default (a release VERSION must equal it). Credentials: the Docker config.
image-push:
	@if [ -z "$(REGISTRY)" ]; then echo "make image-push: set REGISTRY=host:port[/path]" >&2; exit 2; fi
	$(MAKE) image
	$(GO) run ./hack/imagepush -image bin/credwatch-image.tar -chart deploy/helm/credwatch -version $(VERSION) $(REGISTRY)

install:
	CGO_ENABLED=0 $(GO) install $(RELEASE_FLAGS) ./cmd/credwatch

lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' | grep -v '^hack/labbin/'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags capture ./pkg/lab/scenario/
	@if $(GO) list -deps ./pkg/check ./pkg/cloud | grep -E '/pkg/(timechart|markup)$$|html/template'; then echo "pkg/check or pkg/cloud links the HTML/chart stack above (classify log lines with pkg/logs/cause, not pkg/logs)"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

unit:
	$(GO) test -short -count=1 $(GOTEST_FLAGS) ./...

# Integration tests run against real kube-apiserver/etcd processes (the lab) and vcsim/Keystone.
integration: every-scenario lab-binaries
	$(GO) test -count=1 -timeout 25m -run '^TestIntegration' -p 1 $(GOTEST_FLAGS) ./...

# lint + binary size + unit + integration. Builds the lab binaries first if they are missing.
test: every-scenario deps lint binsize lab-binaries
	GO=$(GO) GOTEST_FLAGS="$(GOTEST_FLAGS)" hack/test.sh
	$(MAKE) test-deploy

# The first run builds promtool and krew's validator (minutes on 2 cores); later runs take seconds.
test-deploy:
	set -e; for m in $(DEPLOY_MODULES); do (cd $$m && $(GO) test -count=1 -timeout 15m $(GOTEST_FLAGS) ./...); done

# The command reference docs/reference/*.md, from the cobra tree, and docs/runbook.md, whose outputs
# the current code prints for the committed lab captures, logs and field lines (tests keep both current).
docs:
	$(GO) run ./hack/docgen docs/reference
	$(GO) run ./hack/runbook render docs/runbook.md

# Take the runbook's check and watch snapshots and tokens again from a real lab (minutes; one lab
# at a time), then regenerate the docs.
runbook-capture: lab-binaries
	$(GO) run ./hack/runbook capture hack/runbook/testdata/lab
	$(MAKE) docs

# deploy/krew/credwatch.yaml for VERSION from dist/checksums.txt (after a goreleaser release).
krew-manifest:
	cd hack/krew && $(GO) run . -version $(VERSION) -checksums ../../dist/checksums.txt -out ../../deploy/krew/credwatch.yaml

# goreleaser, pinned in hack/release/go.mod (its own module: it is large).
bin/goreleaser: hack/release/go.mod hack/release/go.sum
	cd hack/release && $(GO) build -o ../../bin/goreleaser github.com/goreleaser/goreleaser/v2

# goreleaser check of .goreleaser.yaml.
release-check: bin/goreleaser
	bin/goreleaser check

# Local release archives and checksums in dist/ (no publishing).
release-snapshot: bin/goreleaser
	bin/goreleaser release --snapshot --clean

# make test and make integration run every lab scenario: a narrowed selection is refused, not obeyed.
every-scenario:
	@if [[ -v CREDWATCH_SCENARIOS ]]; then echo "make: CREDWATCH_SCENARIOS=$$CREDWATCH_SCENARIOS narrows the lab scenarios; make test runs them all: unset it (or run go test yourself)" >&2; exit 2; fi

lab-binaries:
	hack/labbin/build.sh $(CREDWATCH_LAB_BIN)

# make test with every core kept busy by another process (timing-dependent tests show up here).
test-under-load:
	hack/test-under-load.sh

bench: build
	hack/bench.sh

# Only the log throughput part of bench: credwatch logs vs ripgrep on sparse and dense 1 GB logs.
bench-logs:
	hack/bench-logs.sh

# 30-minute accelerated soak of credwatch watch (interval 1 s, a lab roll every 2 minutes):
# RSS and goroutines must stay flat after warm-up. Not part of `make test`. SOAK_MINUTES=5 for a short one.
soak: build lab-binaries
	hack/soak.sh

demo: build lab-binaries
	hack/demo.sh

# The seconds-long walkthrough of token and key forensics: no root, no cluster, no lab.
demo-offline: build
	hack/demo-offline.sh bin/credwatch

# Fuzz every target for FUZZTIME (default 60s each).
FUZZTIME ?= 60s
fuzz:
	hack/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin

deps:
	hack/deps.sh
