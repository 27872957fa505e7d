// Command dist builds gpuform's release: for each target a static binary
// (CGO_ENABLED=0, -trimpath, no build ID) in a reproducible archive
// (tar.gz, zip for windows: entries sorted, one fixed time, owner root,
// fixed modes), SHA256SUMS over the archives, and an SPDX 2.3 JSON SBOM of
// the module graph the binaries embed (runtime/debug build information,
// read back from the built binaries with debug/buildinfo). Building twice
// from the same commit gives the same bytes. make dist runs it; with -check
// it checks a release it wrote instead (make release-check).
//
// It uses the standard library only, so that it weighs on nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// Targets are the platforms gpuform is released for.
var defaultTargets = "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64"

func main() {
	var o options
	var targets string
	var epoch int64
	var verify bool
	flag.StringVar(&o.out, "out", "dist", "the `DIR` the release is written to (emptied first)")
	flag.StringVar(&o.version, "version", "dev", "the release `VERSION`")
	flag.StringVar(&o.pkg, "pkg", "./cmd/gpuform", "the `PACKAGE` to build")
	flag.StringVar(&targets, "targets", defaultTargets, "comma-separated `GOOS/GOARCH` list")
	flag.Int64Var(&epoch, "epoch", 0, "the time of every archive entry and of the SBOM, in `SECONDS` since 1970 (default $SOURCE_DATE_EPOCH, else 2000-01-01)")
	flag.BoolVar(&verify, "check", false, "check the release in -out (the files, SHA256SUMS, the archives' entries and programs, the SBOM, the host's gpuform version) instead of building it")
	flag.Parse()
	if epoch == 0 {
		if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
			if _, err := fmt.Sscan(v, &epoch); err != nil {
				fmt.Fprintf(os.Stderr, "dist: SOURCE_DATE_EPOCH=%q: %v\n", v, err)
				os.Exit(2)
			}
		}
	}
	if epoch == 0 {
		epoch = 946684800 // 2000-01-01T00:00:00Z
	}
	o.time = time.Unix(epoch, 0).UTC()
	o.targets = strings.Split(targets, ",")
	o.extra = flag.Args()
	do := run
	if verify {
		do = check
	}
	if err := do(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}
