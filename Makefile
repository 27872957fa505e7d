# gpuform — see README.md. Every target sets up what it needs.
GO       ?= go
BIN      := bin
GPUFORM  := $(BIN)/gpuform
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
# Tests get 20 minutes at most; the API server's first build is separate.
TEST_TIMEOUT ?= 20m

.PHONY: all build test chromium demo bench bench-go bench-cluster lint fuzz large clean cross dist image test-release install-check

include mk/kubeapi.mk
include mk/kueue.mk
include mk/prometheus.mk

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

## test-release: the release tools' tests (tools/dist builds twice and compares bytes;
## tools/image, a module of its own, runs gpuform from the image it made)
test-release:
	$(GO) test -count=1 ./tools/dist
	cd tools/image && $(GO) vet ./... && $(GO) test -count=1 ./...

## install-check: `go install` without cgo, as a workstation without a C compiler does it,
## then the installed gpuform's version and shell completion
install-check:
	@gobin=$$(mktemp -d) && CGO_ENABLED=0 GOBIN=$$gobin $(GO) install ./cmd/gpuform && \
		$$gobin/gpuform version && $$gobin/gpuform completion bash >/dev/null && rm -rf $$gobin

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

## test: every test (with the benchmark driver's, which ./... skips under testdata, and the
## device plugin's config code on gpuform's configs), vet and formatting; builds the API server
## harness, the Kueue controller manager and Prometheus first, and installs Chromium (for the
## usage report's screenshot) when it is missing
test: lint test-deviceplugin $(KUBEAPI_BIN) $(KUEUE) $(PROMETHEUS) chromium
	KUBEAPI_BIN=$(CURDIR)/$(KUBEAPI_BIN) KUEUE_BIN=$(CURDIR)/$(KUEUE_BIN) PROMETHEUS_BIN=$(CURDIR)/$(PROMETHEUS_BIN) PROMTOOL_BIN=$(CURDIR)/$(PROMTOOL_BIN) CHROMIUM=$(CHROMIUM) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./... ./testdata/bench/...

## test-deviceplugin: the NVIDIA device plugin's own config parsing and validation
## (k8s-device-plugin v0.20.0, committed under testdata/deviceplugin, a separate module) on the
## device-plugin configs gpuform writes (testdata/deviceplugin/configs, goldens of engine/compile)
.PHONY: test-deviceplugin
test-deviceplugin:
	cd testdata/deviceplugin && $(GO) vet ./... && $(GO) test -count=1 ./...

## chromium: headless Chromium for the HTML usage report's screenshot test
## (the Debian package chromium, installed with apt-get when missing; CHROMIUM
## names another binary)
CHROMIUM ?= $(shell command -v chromium || command -v chromium-browser || echo /usr/bin/chromium)
chromium:
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

## docs: regenerate docs/cli.md, the command-line reference, and README.md's table of commands
## from the commands' own help
## (make test fails while it is out of date: cmd/gpuform TestCLIReference)
.PHONY: docs
docs:
	GPUFORM_DOCS_ONLY=1 $(GO) test -count=1 -run '^TestCLIReference$$' ./cmd/gpuform -update

## lint: go vet and gofmt
lint:
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
## kubelet reports (conditions, addresses, nodeInfo, 50 images), as on a real cluster
BENCH_SIZES ?= S,M,L
BENCH_RUNS ?= 3
BENCH_HEAVY_RUNS ?= L=1
BENCH_OUT ?= docs/performance.md
BENCH_BASELINE ?=
BENCH_KUBELET_STATUS ?=
bench: bench-go bench-cluster

bench-go: $(KUBEAPI_BIN)
	KUBEAPI_BIN=$(CURDIR)/$(KUBEAPI_BIN) $(GO) test -run '^$$' -bench . -benchmem ./config/... ./engine/... ./providers/kubernetes/...

bench-cluster: $(KUBEAPI_BIN)
	KUBEAPI_BIN=$(CURDIR)/$(KUBEAPI_BIN) $(GO) run ./testdata/bench -sizes $(BENCH_SIZES) -runs $(BENCH_RUNS) -heavy-runs $(BENCH_HEAVY_RUNS) -out='$(BENCH_OUT)' $(if $(BENCH_BASELINE),-baseline '$(BENCH_BASELINE)') $(if $(BENCH_KUBELET_STATUS),-kubelet-status)

## fuzz: each fuzz target for FUZZTIME (default 2m): the config loader,
## the saved-plan reader, the inventory annotation parser, and the refresh's
## JSON scanner, LIST cutter and stream settle; crashers land in the
## package's testdata/fuzz/<Target>/ and then run as regression seeds
FUZZTIME ?= 2m
FUZZFLAGS ?= -parallel 1 -fuzzminimizetime 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./config
	$(GO) test -run '^$$' -fuzz '^FuzzReadPlanFile$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./engine
	$(GO) test -run '^$$' -fuzz '^FuzzParseAgentInventory$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./engine/capacity
	$(GO) test -run '^$$' -fuzz '^FuzzScan$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./providers/kubernetes
	$(GO) test -run '^$$' -fuzz '^FuzzCut$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./providers/kubernetes
	$(GO) test -run '^$$' -fuzz '^FuzzSettleStream$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./providers/kubernetes

clean:
	rm -rf $(BIN)
