package stack

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuform/gpuform/config"
)

// Plan and drift free the configuration's syntax tree as soon as the
// configuration is valid, before the cluster is opened and its objects
// arrive: at size L the tree is 130 MB of a plan's peak. Connect is where
// the cluster's objects start to come in.
func TestSyntaxDroppedBeforeTheCluster(t *testing.T) {
	errStop := errors.New("stop here")
	for _, c := range []struct {
		name string
		run  func(*Stack) error
	}{
		{"plan", func(s *Stack) error { _, err := s.Plan(context.Background(), PlanOptions{}); return err }},
		{"drift", func(s *Stack) error { _, err := s.Drift(context.Background()); return err }},
		{"fix", func(s *Stack) error { _, err := s.Fix(context.Background(), ApplyOptions{}); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			connected := false
			connect := func(_ context.Context, cfg *config.Config) (Cluster, error) {
				connected = true
				for name, f := range cfg.Files {
					if _, ok := f.Body.(*hclsyntax.Body); ok {
						t.Errorf("%s: the syntax tree is still held when the cluster is opened", name)
					}
					if len(f.Bytes) == 0 {
						t.Errorf("%s: the source bytes were dropped too (diagnostics need them)", name)
					}
				}
				return nil, errStop
			}
			s := New(Dir("../../examples/quickstart"), connect, Options{})
			if err := c.run(s); !errors.Is(err, errStop) {
				t.Fatalf("err = %v, want the connect's", err)
			}
			if !connected {
				t.Fatal("never connected")
			}
		})
	}
}
