package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// exitFmtCheck is the exit code of fmt --check when files need formatting,
// as terraform fmt -check.
const exitFmtCheck = 3

func newFmtCommand(g *globals) *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "fmt [FILE...]",
		Short: "Rewrite configuration files in the canonical format",
		Long: "fmt rewrites the *.hcl files of the working directory (or the files given) in the canonical\n" +
			"layout and prints the names of the files it changed. With --check it changes nothing and exits 3\n" +
			"when a file is not canonical, for CI. Files with syntax errors are reported and left alone.",
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args
			if len(names) == 0 {
				entries, err := os.ReadDir(g.dir())
				if err != nil {
					return fmt.Errorf("list configuration files: %w", err)
				}
				for _, e := range entries {
					if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") && !strings.HasPrefix(e.Name(), ".") {
						names = append(names, e.Name())
					}
				}
				sort.Strings(names)
			}
			var diags hcl.Diagnostics
			parsed := map[string]*hcl.File{}
			unformatted := 0
			for _, name := range names {
				src, err := files.ReadLimited(g.path(name), config.MaxFileSize)
				if err != nil {
					return fmt.Errorf("read %s: %w", name, err)
				}
				out, f, d := config.Format(name, src)
				parsed[name] = f
				if d.HasErrors() {
					diags = append(diags, d...)
					continue
				}
				if bytes.Equal(out, src) {
					continue
				}
				unformatted++
				textsafe.Fprintln(g.stdout, name)
				if check {
					continue
				}
				if err := files.Rewrite(g.path(name), out); err != nil {
					return fmt.Errorf("write %s: %w", name, err)
				}
			}
			if len(diags) > 0 {
				dw := configDiagWriter(g, parsed)
				_ = dw.Write(g.stderr, diags)
				return &exitError{code: 1}
			}
			if check && unformatted > 0 {
				return &exitError{code: exitFmtCheck}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "change nothing; exit 3 if any file is not canonical")
	return cmd
}
