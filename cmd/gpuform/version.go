package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/internal/textsafe"
	ver "github.com/gpuform/gpuform/internal/version"
)

// version and commit, set at link time (-ldflags "-X main.version=v1.2.3
// -X main.commit=SHA"), override the build information's (internal/version).
var version, commit string

func newVersionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the gpuform version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := textsafe.Fprintf(g.stdout, "%s\n", ver.Line(version, commit))
			return err
		},
	}
}
