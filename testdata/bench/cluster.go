package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// prepareTemplate starts a harness in dir, installs the CRDs of Kueue,
// KServe and the GPU Operator, a ClusterPolicy and the size's GPU nodes,
// applies the pools-only configuration poolsDir (so the nodes carry their
// pools' MIG and time-slicing labels, as on a cluster that already runs the
// pools) and stops the harness, leaving dir as the template every run
// starts from.
func (b *bench) prepareTemplate(ctx context.Context, dir, poolsDir string, nodes []gen.Node) error {
	s, err := kubeapitest.StartOptions(dir, serverOptions())
	if err != nil {
		return err
	}
	defer s.Stop()
	cfg, err := s.RESTConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	if err := kubeapitest.ApplyCRDs(ctx, cfg, "kueue.yaml", "kserve.yaml", "gpu-operator.yaml"); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	if err := kubeapitest.CreateNamespaces(ctx, cfg, "gpu-operator"); err != nil {
		return err
	}
	if err := kubeapitest.CreateClusterPolicy(ctx, cfg, "cluster-policy"); err != nil {
		return err
	}
	gpuNodes := make([]kubeapitest.GPUNode, len(nodes))
	for i, n := range nodes {
		gpuNodes[i] = kubeapitest.GPUNode{Name: n.Name, Labels: n.Labels, Capacity: n.Capacity, Kubelet: b.kubeletStatus}
	}
	if err := kubeapitest.CreateNodes(ctx, cfg, gpuNodes...); err != nil {
		return err
	}
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go kubeapitest.PlayMigManager(mctx, cfg)
	r, err := b.gpuform(ctx, s, "--chdir", poolsDir, "apply", "--auto-approve")
	if err != nil {
		return err
	}
	if r.exit != 0 {
		return fmt.Errorf("apply the pools: exit %d\n%s", r.exit, r.stderr)
	}
	return nil
}

// startCopy copies the stopped template harness dir into a fresh dir and
// starts a harness on it: the same etcd data, new ports.
func startCopy(template, dir string) (*kubeapitest.Server, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := copyTree(template, dir); err != nil {
		return nil, fmt.Errorf("copy the template cluster: %w", err)
	}
	return kubeapitest.StartOptions(dir, serverOptions())
}

// copyTree copies regular files and directories from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
}
