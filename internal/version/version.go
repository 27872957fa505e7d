// Package version says which gpuform this is: the version and VCS commit
// that the build recorded (runtime/debug.ReadBuildInfo: the module version
// under `go install module@version`, the commit of a build from a
// checkout), overridden by values set at link time where given.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Resolve returns the version and commit to report: ldVersion and ldCommit
// (set with -ldflags -X) where not empty, else the build information's
// (info, ok as debug.ReadBuildInfo returns them), else "dev" and "". A
// commit built from a tree with uncommitted changes ends in "-dirty".
func Resolve(info *debug.BuildInfo, ok bool, ldVersion, ldCommit string) (ver, rev string) {
	ver, rev = ldVersion, ldCommit
	if ok && ver == "" {
		ver = info.Main.Version
	}
	if ver == "" || ver == "(devel)" {
		ver = "dev"
	}
	if !ok || rev != "" {
		return ver, rev
	}
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	return ver, rev
}

// Line is what gpuform version prints for this binary:
// "gpuform v1.2.3 (commit abc, go1.26.8 linux/amd64)".
func Line(ldVersion, ldCommit string) string {
	info, ok := debug.ReadBuildInfo()
	ver, rev := Resolve(info, ok, ldVersion, ldCommit)
	if rev != "" {
		rev = "commit " + rev + ", "
	}
	return fmt.Sprintf("gpuform %s (%s%s %s/%s)", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
