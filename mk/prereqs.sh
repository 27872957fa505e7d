#!/bin/sh
# prereqs.sh: what make test needs, checked before anything builds, each
# missing one named with what to install. Exit 1 if any is missing.
set -u
fail=0
missing() {
	echo "make test: missing $1" >&2
	echo "  $2" >&2
	fail=1
}

# Go at least the version of go.mod (the go directive; GOTOOLCHAIN may fetch
# a newer one from the module proxy, which counts).
want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)
if ! command -v "${GO:-go}" >/dev/null 2>&1; then
	missing "Go $want or later" "install it from the Go downloads page (or your package manager) and put go on the PATH"
else
	have=$("${GO:-go}" env GOVERSION 2>/dev/null | sed 's/^go//')
	if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n 1)" != "$want" ]; then
		missing "Go $want or later (found ${have:-none})" "install a newer Go, or let GOTOOLCHAIN=auto fetch it"
	fi
fi
for tool in git bash; do
	command -v "$tool" >/dev/null 2>&1 || missing "$tool" "install $tool (Debian: apt-get install $tool; macOS: it comes with the Xcode command line tools)"
done
# The Go module proxy (or a filled module cache): every harness is built
# from modules. Only a warning: the cache may hold all of them already.
proxy=$("${GO:-go}" env GOPROXY 2>/dev/null | cut -d, -f1)
if [ "$proxy" = off ]; then
	echo "make test: GOPROXY=off: the harnesses' modules must already be in the module cache" >&2
fi
[ "$fail" = 0 ] || echo "make test: install what is missing above, then run make test again" >&2
exit "$fail"
