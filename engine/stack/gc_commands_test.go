package stack_test

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
)

// gcCluster records GOGC whenever the cluster is read.
type gcCluster struct {
	stack.Cluster
	refresh []int
}

func (c *gcCluster) Refresh(ctx context.Context, d *engine.Desired, opts engine.RefreshOptions) (*engine.Live, error) {
	c.refresh = append(c.refresh, stack.CurrentGCPercent())
	return c.Cluster.Refresh(ctx, d, opts)
}

// Plan, Drift and Preview read the cluster at GCPercent and put the
// previous setting back; an apply reads and writes at Go's default once its
// configuration is loaded.
func TestCommandsGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		run  func(*stack.Stack) error
		want int
	}{
		{"plan", func(s *stack.Stack) error { _, err := s.Plan(ctx, stack.PlanOptions{}); return err }, stack.GCPercent},
		{"drift", func(s *stack.Stack) error { _, err := s.Drift(ctx); return err }, stack.GCPercent},
		{"preview", func(s *stack.Stack) error {
			_, err := s.Preview(ctx, stack.PreviewOptions{Base: commitA})
			return err
		}, stack.GCPercent},
		{"apply", func(s *stack.Stack) error { _, err := s.Apply(ctx, applyOpts()); return err }, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, sim := quickstart(t)
			cl := &gcCluster{Cluster: sim}
			src := quickstartGit(t)
			src.head = commitB
			debug.SetGCPercent(100)
			if err := tt.run(stack.New(src, stack.Using(cl), stack.Options{GCPercent: stack.GCPercent})); err != nil {
				t.Fatal(err)
			}
			if len(cl.refresh) == 0 {
				t.Fatalf("%s read no cluster", tt.name)
			}
			for _, got := range cl.refresh {
				if got != tt.want {
					t.Errorf("GOGC while %s reads the cluster = %d, want %d", tt.name, got, tt.want)
				}
			}
			if after := stack.CurrentGCPercent(); after != 100 {
				t.Errorf("GOGC after %s = %d, want 100", tt.name, after)
			}
		})
	}
}
