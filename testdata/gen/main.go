// Command gen writes a large, valid gpuform configuration for benchmarks:
//
//	go run ./testdata/gen -tenants 1000 -models 5000 [-nodes 4] [-foreach] -out examples/large
//
// The same flags always write the same main.hcl. See package gen.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpuform/gpuform/testdata/gen/gen"
)

func main() {
	var o gen.Options
	var out string
	flag.IntVar(&o.Tenants, "tenants", 1000, "number of tenants")
	flag.IntVar(&o.Models, "models", 5000, "number of models, spread over the tenants")
	flag.IntVar(&o.Nodes, "nodes", 0, "GPU nodes (8 GPUs each) per pool; when set, each pool's overcommit lets the quotas fit")
	flag.IntVar(&o.MaxUnavailable, "max-unavailable", 1, "every pool's max_unavailable")
	flag.IntVar(&o.ChangePercent, "change", 0, "change the pods and memory quotas of this percentage of the tenants")
	size := flag.String("size", "", "a benchmark size (S, M or L): sets -tenants, -models, -nodes and -max-unavailable")
	flag.BoolVar(&o.ForEach, "foreach", false, "write tenants and models as two for_each blocks over locals maps")
	flag.StringVar(&out, "out", "examples/large", "directory to write "+gen.FileName+" into")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "gen: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if *size != "" {
		found := false
		for _, s := range gen.Sizes() {
			if s.Name == *size {
				change, foreach := o.ChangePercent, o.ForEach
				o = s.Options()
				o.ChangePercent, o.ForEach = change, foreach
				found = true
			}
		}
		if !found {
			fmt.Fprintf(os.Stderr, "gen: unknown size %q (want S, M or L)\n", *size)
			os.Exit(2)
		}
	}
	if err := gen.Write(out, o); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("Wrote %s: %d tenants, %d models.\n", filepath.Join(out, gen.FileName), o.Tenants, o.Models)
}
