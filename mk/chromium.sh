#!/bin/sh
# chromium.sh ROOT WRAPPER: a headless Chromium for the usage report's
# screenshot test (cmd/gpuform TestUsageHTMLScreenshot), without root. On
# Debian and Ubuntu it fetches the distribution's chromium package and those
# of its dependencies that are not installed (apt-get download, with apt's
# package lists in ROOT/apt, so no root and no change to the system),
# unpacks them into ROOT/fs (dpkg-deb -x) and writes WRAPPER, a script that
# runs that chromium with its libraries. Elsewhere it fails, saying what to
# install. Called by make (mk/chromium.mk) only when no chromium is on the PATH
# and CHROMIUM is not set.
set -eu
root=${1:?usage: chromium.sh ROOT WRAPPER}
wrapper=${2:?usage: chromium.sh ROOT WRAPPER}
admindir=${CHROMIUM_DPKG_ADMINDIR:-/var/lib/dpkg}

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
	echo "make test: no Chromium for the usage report's screenshot test, and no apt-get to fetch one." >&2
	echo "  Install Chromium (macOS: brew install --cask chromium; Fedora: dnf install chromium)" >&2
	echo "  or Google Chrome, then run make test CHROMIUM=/path/to/the/browser." >&2
	exit 1
fi

case "$root" in /*) ;; *) root=$(pwd)/$root ;; esac
rm -rf "$root/fs" "$root/debs"
mkdir -p "$root/apt/lists/partial" "$root/apt/archives/partial" "$root/debs" "$root/fs"
user=$(id -un)
apt_opts="-q -o Dir::State::Lists=$root/apt/lists -o Dir::Cache::Archives=$root/apt/archives -o Debug::NoLocking=1 -o APT::Sandbox::User=$user"

echo "make test: fetching Chromium and its missing libraries into $root (apt-get download, no root)"
# shellcheck disable=SC2086
apt-get $apt_opts update >"$root/apt/update.log" 2>&1 || {
	cat "$root/apt/update.log" >&2
	echo "make test: apt-get update into $root failed (offline?): install chromium, or set CHROMIUM" >&2
	exit 1
}
# Every package chromium needs, real names only (<virtual> ones are provided
# by a real one that is listed too), less what is installed.
# shellcheck disable=SC2086
all=$(apt-cache $apt_opts depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances chromium | grep '^[a-z0-9]' | sort -u)
missing=""
for p in $all; do
	if ! dpkg-query --admindir="$admindir" -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii'; then
		missing="$missing $p"
	fi
done
case " $missing " in *" chromium "*) ;; *) missing="$missing chromium" ;; esac
# shellcheck disable=SC2086
(cd "$root/debs" && apt-get $apt_opts download $missing >"$root/apt/download.log" 2>&1) || {
	cat "$root/apt/download.log" >&2
	exit 1
}
for deb in "$root"/debs/*.deb; do
	dpkg-deb -x "$deb" "$root/fs"
done
bin="$root/fs/usr/lib/chromium/chromium"
if [ ! -x "$bin" ]; then
	echo "make test: the chromium package has no $bin" >&2
	exit 1
fi
# The packages' library directories (the multiarch ones and chromium's own).
libs=""
for d in "$root"/fs/lib/*-linux-gnu* "$root"/fs/usr/lib/*-linux-gnu* "$root/fs/usr/lib/chromium"; do
	if [ -d "$d" ]; then libs="$libs$d:"; fi
done
mkdir -p "$(dirname "$wrapper")"
cat >"$wrapper.tmp" <<WRAPPER
#!/bin/sh
# Chromium fetched by mk/chromium.sh into $root (no root needed).
export LD_LIBRARY_PATH="$libs\${LD_LIBRARY_PATH:-}"
if [ -f "$root/fs/etc/fonts/fonts.conf" ] && [ -z "\${FONTCONFIG_FILE:-}" ]; then
	export FONTCONFIG_FILE="$root/fs/etc/fonts/fonts.conf"
fi
exec "$bin" "\$@"
WRAPPER
chmod +x "$wrapper.tmp"
# A real start: headless, as the test runs it, printing a page's DOM.
mkdir -p "$root/check"
HOME="$root/check" "$wrapper.tmp" --headless --no-sandbox --disable-gpu --user-data-dir="$root/check/profile" \
	--dump-dom 'data:text/html,<p>ok</p>' >"$root/check.out" 2>"$root/check.log" && grep -q '<p>ok</p>' "$root/check.out" || {
	cat "$root/check.log" >&2
	echo "make test: the fetched Chromium does not start (above); install chromium, or set CHROMIUM" >&2
	exit 1
}
mv "$wrapper.tmp" "$wrapper"
echo "make test: Chromium: $wrapper ($("$wrapper" --version 2>/dev/null))"
