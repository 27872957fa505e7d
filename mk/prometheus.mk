# prometheus.mk: builds bin/prometheus and bin/promtool, the real Prometheus
# server and its tool for gpuform usage's tests (internal/promtest): a
# separate Go module, testdata/prometheus, whose go.mod pins
# github.com/prometheus/prometheus as a tool dependency (from the Go module
# proxy). Built with -tags remove_all_sd: the tests scrape nothing, so no
# service discovery plugin (AWS, Azure, GCE, Kubernetes, ...) is compiled
# in; the web UI's assets are not embedded either (no builtinassets tag):
# the tests use the HTTP API only. Include from the top-level Makefile:
#
#	include mk/prometheus.mk
#
# Rebuilt only when testdata/prometheus's go.mod, go.sum or this file change.

PROMETHEUS_BIN := bin/prometheus
PROMTOOL_BIN := bin/promtool
PROMETHEUS_SRCS := testdata/prometheus/go.mod testdata/prometheus/go.sum

# What `make test` needs.
PROMETHEUS := $(PROMETHEUS_BIN) $(PROMTOOL_BIN)

# Both commands in one go build: they share nearly every package, and one
# build compiles each once (two builds at once, as make -j would run them,
# would each compile them).
$(PROMETHEUS_BIN): $(PROMETHEUS_SRCS) mk/prometheus.mk
	@mkdir -p $(dir $@)
	cd testdata/prometheus && go build -tags remove_all_sd -ldflags "-s -w" -o ../../$(dir $@) github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool

# Built with bin/prometheus; on its own only when it alone is missing.
$(PROMTOOL_BIN): $(PROMETHEUS_BIN)
	@test -x $@ || { cd testdata/prometheus && go build -tags remove_all_sd -ldflags "-s -w" -o ../../$@ github.com/prometheus/prometheus/cmd/promtool; }

.PHONY: prometheus
prometheus: $(PROMETHEUS)
