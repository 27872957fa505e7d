package kubeapitest_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// chartRenders are the Helm chart's renderings for each value set of
// testdata/chart/values (testdata/chart's TestTemplate keeps them equal to
// what the chart renders): examples/deploy and testdata/chart/rendered/*.
func chartRenders(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	dirs := map[string]string{"examples": filepath.Join(root, "examples", "deploy")}
	sets, err := filepath.Glob(filepath.Join(root, "testdata", "chart", "rendered", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sets {
		dirs[filepath.Base(d)] = d
	}
	if len(dirs) < 3 {
		t.Fatalf("chart renderings %v: want examples/deploy and testdata/chart/rendered/{defaults,ci}", dirs)
	}
	return dirs
}

// TestChartRendersPassStrictValidation: every object the Helm chart
// (charts/gpuform) renders, for each value set, is accepted by a dry-run
// server-side apply with strict field validation, with no warning at all.
func TestChartRendersPassStrictValidation(t *testing.T) {
	ctx := testContext()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	warnings := &kubeapitest.Warnings{}
	cfg.WarningHandler = warnings
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	// A dry run of a namespaced object needs its namespace.
	if err := kubeapitest.CreateNamespaces(ctx, cfg, "gpuform-system"); err != nil {
		t.Fatal(err)
	}
	for set, dir := range chartRenders(t) {
		t.Run(set, func(t *testing.T) {
			var files []string
			err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
					files = append(files, path)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(files)
			n := 0
			before := len(warnings.All())
			for _, f := range files {
				objs, err := kubeapitest.ReadYAML(f)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				for _, o := range objs {
					n++
					if err := dryRunApply(ctx, dyn, mapper, o); err != nil {
						t.Errorf("%s: %s %s: %v", f, o.GetKind(), o.GetName(), err)
					}
				}
			}
			if w := warnings.All()[before:]; len(w) > 0 {
				t.Errorf("the API server warned:\n  %s", strings.Join(w, "\n  "))
			}
			if n < 3 {
				t.Errorf("only %d objects in %s", n, dir)
			}
		})
	}
}
