# kueue.mk: builds bin/kueue, the Kueue controller manager for the outcome
# tests (testdata/kueue, a separate Go module requiring sigs.k8s.io/kueue at
# the version pinned in its go.mod, from the Go module proxy), and
# bin/kueue-manifests, the same module version's CRDs
# (config/components/crd/bases) and webhook configurations
# (config/components/webhook/manifests.yaml) that bin/kueue installs.
# Include from the top-level Makefile:
#
#	include mk/kueue.mk
#
# The first build compiles Kueue, controller-runtime and their Kubernetes
# libraries (see docs/testing.md for the measured time); later builds reuse
# the Go build cache. Rebuilt only when testdata/kueue's Go sources, go.mod,
# go.sum or this file change.

KUEUE_BIN := bin/kueue
KUEUE_MANIFESTS := bin/kueue-manifests
KUEUE_SRCS := $(wildcard testdata/kueue/*.go) testdata/kueue/go.mod testdata/kueue/go.sum

# What `make test` needs: the binary and the manifests it installs.
KUEUE := $(KUEUE_BIN) $(KUEUE_MANIFESTS)/webhooks.yaml

$(KUEUE_BIN): $(KUEUE_SRCS) mk/kueue.mk
	@mkdir -p $(dir $@)
	cd testdata/kueue && go build -ldflags "-s -w" -o ../../$(KUEUE_BIN) .

# The CRDs and webhook configurations of the module version go.mod pins,
# from the module cache: go mod download fetches it (checked against
# go.sum) where the cache is empty, which go list -m alone does not.
$(KUEUE_MANIFESTS)/webhooks.yaml: testdata/kueue/go.mod testdata/kueue/go.sum mk/kueue.mk
	@rm -rf $(KUEUE_MANIFESTS) && mkdir -p $(KUEUE_MANIFESTS)/crds
	@mod=$$(cd testdata/kueue && go mod download sigs.k8s.io/kueue && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue) && \
	test -n "$$mod" && \
	install -m 0644 $$mod/config/components/crd/bases/*.yaml $(KUEUE_MANIFESTS)/crds/ && \
	install -m 0644 $$mod/config/components/webhook/manifests.yaml $@

.PHONY: kueue
kueue: $(KUEUE)
