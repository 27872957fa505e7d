# kubeapi.mk: builds bin/kubeapi, the real kube-apiserver + etcd (+ a few
# kube-controller-manager loops) test harness in testdata/kubeapi, a separate
# Go module. Include from the top-level Makefile:
#
#	include mk/kubeapi.mk
#
# The first build compiles all of Kubernetes (about 12 minutes on 2 cores);
# later builds reuse the Go build cache (seconds). The binary is rebuilt only
# when testdata/kubeapi's Go sources, go.mod, go.sum or this file change.

KUBEAPI_BIN := bin/kubeapi
KUBEAPI_K8S_VERSION := v1.37.2
KUBEAPI_SRCS := $(wildcard testdata/kubeapi/*.go) testdata/kubeapi/go.mod testdata/kubeapi/go.sum
# Without the -X flags /version reports v0.0.0 (the apiserver reads its
# version from k8s.io/component-base/version); -s -w drop the symbol table and
# DWARF (about 195 MB -> 130 MB; panics still show function names).
KUBEAPI_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(KUBEAPI_K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=37 \
	-X k8s.io/component-base/version.gitTreeState=clean

$(KUBEAPI_BIN): $(KUBEAPI_SRCS) mk/kubeapi.mk
	@mkdir -p $(dir $@)
	cd testdata/kubeapi && go build -ldflags "$(KUBEAPI_LDFLAGS)" -o ../../$(KUBEAPI_BIN) .

.PHONY: kubeapi
kubeapi: $(KUBEAPI_BIN)
