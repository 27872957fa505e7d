# gpuform — see README.md. Every target sets up what it needs.
GO       ?= go
BIN      := bin
GPUFORM  := $(BIN)/gpuform
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
# Tests get 20 minutes at most; the API server's first build is separate.
TEST_TIMEOUT ?= 20m

.PHONY: all build test demo bench bench-go bench-cluster lint fuzz large clean cross dist image test-release install-check

include mk/kubeapi.mk
include mk/kueue.mk
include mk/prometheus.mk
include mk/chromium.mk

all: build

build: $(GPUFORM)

$(GPUFORM): FORCE
	$(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/gpuform

FORCE:

## cross: gpuform for every release platform, without cgo (bin/cross/gpuform-OS-ARCH);
## NVML, and so the agent, is in linux builds with cgo only (see docs/install.md): the host's
## binary's agent must say so
CROSS_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@for t in $(CROSS_TARGETS); do os=$${t%/*}; arch=$${t#*/}; \
		echo "build $$t"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -o $(BIN)/cross/gpuform-$$os-$$arch ./cmd/gpuform || exit 1; \
	done
	@host=$(BIN)/cross/gpuform-$$($(GO) env GOOS)-$$($(GO) env GOARCH); \
	if $$host agent --node x 2>&1 | grep -q 'gpuform agent needs NVML'; then echo "$$host agent: says it needs NVML"; \
	else echo "$$host agent: no word of NVML"; exit 1; fi

## dist: the release in dist/: a reproducible archive per platform (tar.gz, zip for windows),
## SHA256SUMS and an SPDX SBOM (tools/dist); entries dated the commit's time
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 946684800)
dist:
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./tools/dist -version $(VERSION) -out dist README.md docs/install.md

## image: the CLI's OCI image layout in dist/image, built offline without a container daemon
## (tools/image, go-containerregistry): the static gpuform and the CA bundle IMAGE_CA
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
IMAGE_CA ?= /etc/ssl/certs/ca-certificates.crt
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(BIN)/image/gpuform ./cmd/gpuform
	cd tools/image && SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run . -binary $(CURDIR)/$(BIN)/image/gpuform -arch $(IMAGE_ARCH) -ca $(IMAGE_CA) -ref gpuform:$(VERSION) -out $(CURDIR)/dist/image

## test-release: tools/image's test (a module of its own): gpuform run from the image it made
## (tools/dist's, the release built twice and compared, is in the main module's ./...)
test-release:
	cd tools/image && $(GO) vet ./... && $(GO) test -count=1 ./...

## release-check: the release and the image end to end, offline, as a user meets them:
## make dist for every target, then tools/dist -check (exactly the six archives, SHA256SUMS and
## the SBOM; each archive's entries, its binary a program for its platform; the SBOM's packages
## the modules the binaries link; the host archive's gpuform version) and sha256sum -c; then
## make image and tools/image -check (the layout read back, unpacked, its gpuform version run),
## all with one VERSION. .ci/run runs it; make test does not (six cross-builds of a cold cache
## take minutes)
.PHONY: release-check
release-check:
	@$(MAKE) --no-print-directory dist VERSION=$(VERSION)
	$(GO) run ./tools/dist -check -version $(VERSION) -out dist README.md docs/install.md
	cd dist && sha256sum -c --strict SHA256SUMS
	@$(MAKE) --no-print-directory image VERSION=$(VERSION)
	cd tools/image && $(GO) run . -check $(CURDIR)/dist/image -ref gpuform:$(VERSION) -version $(VERSION) -ca $(IMAGE_CA)

## install-check: `go install` without cgo, as a workstation without a C compiler does it,
## then the installed gpuform's version and its shell completion for bash, zsh, fish and PowerShell
install-check:
	@gobin=$$(mktemp -d) && CGO_ENABLED=0 GOBIN=$$gobin $(GO) install ./cmd/gpuform && \
		$$gobin/gpuform version && for sh in bash zsh fish powershell; do \
		$$gobin/gpuform completion $$sh | grep -q gpuform || { echo "gpuform completion $$sh wrote no script"; exit 1; }; done && \
		echo "completion: bash zsh fish powershell" && rm -rf $$gobin

## demo: the main job on the embedded simulated cluster (no cluster, no GPU needed):
## validate, plan saved to a file, apply of that file (the CI flow), plan again (no changes)
## and the GPU inventory of examples/quickstart
DEMO := examples/quickstart
demo: build
	@rm -f $(DEMO)/cluster.sim.state.json $(DEMO)/cluster.sim.state.json.lock $(DEMO)/quickstart.plan
	$(GPUFORM) --chdir $(DEMO) validate
	$(GPUFORM) --chdir $(DEMO) plan --out quickstart.plan
	$(GPUFORM) --chdir $(DEMO) apply quickstart.plan
	$(GPUFORM) --chdir $(DEMO) plan --detailed-exitcode
	$(GPUFORM) --chdir $(DEMO) inventory
	$(GPUFORM) --chdir examples/bank validate

## test: every test (with the benchmark driver's, which ./... skips under testdata, the
## device plugin's config code on gpuform's configs, the Helm chart's and actionlint's modules),
## the image builder's, vet and formatting. First it checks every prerequisite (mk/prereqs.sh: Go, git, bash, each
## missing one named with what to install), then builds what the tests run and is not built yet
## (bin/kubeapi, bin/kueue, bin/prometheus and bin/promtool, at once), and a headless Chromium
## for the usage report's screenshot (mk/chromium.mk: no root; fetched only when none is there)
test: prereqs
	@$(MAKE) --no-print-directory -j $(TEST_JOBS) test-tools
	@$(MAKE) --no-print-directory lint test-deviceplugin test-chart test-actionlint test-release
	KUBEAPI_BIN=$(CURDIR)/$(KUBEAPI_BIN) KUEUE_BIN=$(CURDIR)/$(KUEUE_BIN) PROMETHEUS_BIN=$(CURDIR)/$(PROMETHEUS_BIN) PROMTOOL_BIN=$(CURDIR)/$(PROMTOOL_BIN) CHROMIUM=$(CHROMIUM) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./... ./testdata/bench/...

# How many of the harness builds and Chromium's fetch run at once. Each go
# build already uses every core; running them together keeps the cores busy
# through each one's serial parts (module downloads, the largest packages,
# linking) and overlaps downloads with compiling. They pin different versions
# of Kubernetes, gRPC and protobuf (the bulk of each build), so even one after
# the other they would share almost nothing in the build cache; lint (the main
# module, whose Kubernetes libraries bin/kubeapi's build also compiles) and the
# Helm chart's module run after them and find those in the cache.
TEST_JOBS ?= 4

## test-tools: what the tests run, built or fetched only where missing or out of date
.PHONY: prereqs test-tools
test-tools: $(KUBEAPI_BIN) $(KUEUE) $(PROMETHEUS) chromium

prereqs:
	@GO=$(GO) sh mk/prereqs.sh

## test-chart: the Helm chart (charts/gpuform) linted and templated with Helm's Go SDK
## for each value set of testdata/chart/values, against its renderings (examples/deploy,
## testdata/chart/rendered; testdata/chart, a separate module); chart-update rewrites them
.PHONY: test-chart chart-update
test-chart:
	cd testdata/chart && $(GO) vet ./... && $(GO) test -count=1 ./...
chart-update:
	cd testdata/chart && $(GO) test -count=1 -run '^TestTemplate$$' ./... -update

## test-actionlint: actionlint (testdata/actionlint, a separate module pinning it) on the
## example workflows, on them with this tree's action, and on action.yml's steps
.PHONY: test-actionlint
test-actionlint:
	cd testdata/actionlint && $(GO) vet ./... && $(GO) test -count=1 ./...

## test-deviceplugin: the NVIDIA device plugin's own config parsing and validation
## (k8s-device-plugin v0.20.0, committed under testdata/deviceplugin, a separate module) on the
## device-plugin configs gpuform writes (testdata/deviceplugin/configs, goldens of engine/compile)
.PHONY: test-deviceplugin
test-deviceplugin:
	cd testdata/deviceplugin && $(GO) vet ./... && $(GO) test -count=1 ./...

## docs: regenerate docs/cli.md, the command-line reference, and README.md's table of commands
## from the commands' own help
## (make test fails while it is out of date: cmd/gpuform TestCLIReference)
.PHONY: docs
docs:
	GPUFORM_DOCS_ONLY=1 $(GO) test -count=1 -run '^TestCLIReference$$' ./cmd/gpuform -update

## lint: go vet and gofmt
lint:
	$(GO) mod tidy -diff
	$(GO) vet ./... ./testdata/bench/...
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^testdata/kubeapi/')); \
	if [ -n "$$out" ]; then echo "gofmt wants to rewrite:"; echo "$$out"; exit 1; fi

## large: generate examples/large (1,000 tenants, 5,000 models)
large:
	$(GO) run ./testdata/gen -tenants 1000 -models 5000 -out examples/large

## bench: the Go benchmarks of the hot paths (-benchmem), then the
## side-by-side benchmark on the API server harness (testdata/bench): gpuform
## vs kubectl vs the raw LIST floor at sizes S, M and L, each measurement
## BENCH_RUNS times (the applies from empty and kubectl diff BENCH_HEAVY_RUNS
## times at the sizes it names); it writes its table into BENCH_OUT (docs/performance.md;
## empty: stdout only). kubectl is $$KUBECTL, else bin/kubectl built from the Go module proxy
## (testdata/kubectl). BENCH_BASELINE=<git ref> also builds gpuform of that commit and measures
## its no-op plan and apply from empty interleaved with this tree's, in a further table with
## the ratio this tree / baseline. BENCH_KUBELET_STATUS=1 gives the GPU nodes the status a
## kubelet reports (conditions, addresses, nodeInfo, 50 images), as on a real cluster;
## BENCH_KUBECTL=0 leaves kubectl out (gpuform, the baseline and the floor only)
BENCH_SIZES ?= S,M,L
BENCH_RUNS ?= 3
BENCH_HEAVY_RUNS ?= L=1
BENCH_OUT ?= docs/performance.md
BENCH_BASELINE ?=
BENCH_KUBELET_STATUS ?=
BENCH_KUBECTL ?= 1
## BENCH_FLEET=10 measures a fleet instead: 10 harness clusters of size BENCH_FLEET_SIZE, the
## fleet's no-op plan against the members planned one after another and its floor (printed only).
BENCH_FLEET ?=
BENCH_FLEET_SIZE ?= S
bench: bench-go bench-cluster

bench-go: $(KUBEAPI_BIN)
	KUBEAPI_BIN=$(CURDIR)/$(KUBEAPI_BIN) $(GO) test -run '^$$' -bench . -benchmem ./config/... ./engine/... ./providers/kubernetes/...

bench-cluster: $(KUBEAPI_BIN)
	KUBEAPI_BIN=$(CURDIR)/$(KUBEAPI_BIN) $(GO) run ./testdata/bench -sizes $(if $(BENCH_FLEET),$(BENCH_FLEET_SIZE) -fleet $(BENCH_FLEET),$(BENCH_SIZES)) -runs $(BENCH_RUNS) -heavy-runs $(BENCH_HEAVY_RUNS) -out='$(BENCH_OUT)' $(if $(BENCH_BASELINE),-baseline '$(BENCH_BASELINE)') $(if $(BENCH_KUBELET_STATUS),-kubelet-status) $(if $(filter 0,$(BENCH_KUBECTL)),-kubectl=false)

## fuzz: each fuzz target for FUZZTIME (default 2m): the config loader,
## the saved-plan reader, the inventory annotation parser, and the refresh's
## JSON scanner and LIST cutter; crashers land in the
## package's testdata/fuzz/<Target>/ and then run as regression seeds
FUZZTIME ?= 2m
FUZZFLAGS ?= -parallel 1 -fuzzminimizetime 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./config
	$(GO) test -run '^$$' -fuzz '^FuzzReadPlanFile$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./engine
	$(GO) test -run '^$$' -fuzz '^FuzzParseAgentInventory$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./engine/capacity
	$(GO) test -run '^$$' -fuzz '^FuzzScan$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./providers/kubernetes
	$(GO) test -run '^$$' -fuzz '^FuzzCut$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./providers/kubernetes

clean:
	rm -rf $(BIN)
