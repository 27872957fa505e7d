package main

import (
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/internal/textsafe"
)

// version and commit override what the binary's build information says,
// when set at build time: -ldflags "-X main.version=v1.2.3 -X
// main.commit=<sha>" (make build and make dist set version). Left empty,
// gpuform version reports the module version and VCS commit the Go
// toolchain recorded (runtime/debug.ReadBuildInfo): the tagged version
// under `go install github.com/gpuform/gpuform/cmd/gpuform@v1.2.3`, the
// commit of a build from a git checkout.
var (
	version string
	commit  string
)

// buildVersion is the version and commit gpuform reports: the ldflags
// values where given, else the build information's, else "dev" and "".
func buildVersion(info *debug.BuildInfo, ok bool, ldVersion, ldCommit string) (ver, rev string) {
	ver, rev = ldVersion, ldCommit
	if !ok {
		if ver == "" {
			ver = "dev"
		}
		return ver, rev
	}
	if ver == "" {
		ver = info.Main.Version
		if ver == "" || ver == "(devel)" {
			ver = "dev"
		}
	}
	if rev == "" {
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
	}
	return ver, rev
}

func newVersionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the gpuform version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info, ok := debug.ReadBuildInfo()
			ver, rev := buildVersion(info, ok, version, commit)
			if rev != "" {
				rev = "commit " + rev + ", "
			}
			_, err := textsafe.Fprintf(g.stdout, "gpuform %s (%s%s %s/%s)\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
