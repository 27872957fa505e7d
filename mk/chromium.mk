# chromium.mk: a headless Chromium for the usage report's screenshot test
# (cmd/gpuform TestUsageHTMLScreenshot), never installed as root: CHROMIUM if
# set, else chromium or chromium-browser on the PATH, else bin/chromium, a
# wrapper around the Debian package and its missing libraries that
# mk/chromium.sh fetches into bin/chromium-root with apt-get download (no
# root, nothing installed on the system). Where none can be had (no apt-get,
# offline) make test stops and says what to install. Include from the
# top-level Makefile:
#
#	include mk/chromium.mk

CHROMIUM_WRAPPER := bin/chromium
CHROMIUM ?= $(or $(shell command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null),$(CURDIR)/$(CHROMIUM_WRAPPER))

.PHONY: chromium
chromium:
	@if [ "$(CHROMIUM)" = "$(CURDIR)/$(CHROMIUM_WRAPPER)" ] && [ ! -x "$(CHROMIUM_WRAPPER)" ]; then \
		sh mk/chromium.sh bin/chromium-root $(CHROMIUM_WRAPPER); \
	elif ! [ -x "$(CHROMIUM)" ] && ! command -v "$(CHROMIUM)" >/dev/null 2>&1; then \
		echo "make test: CHROMIUM=$(CHROMIUM) is not an executable" >&2; exit 1; \
	fi
