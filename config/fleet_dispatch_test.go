package config_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpuform/gpuform/config"
)

// dispatchSrc: tenant t is dispatched by MultiKueue from the manager hub
// (no pool of its own) to east and west, with per-cluster figures: whole
// GPUs on pool a, MIG slices on pool m (east only), borrowing and lending
// limits set on one worker only, cpu set on both, memory on east only,
// pods. Every member evaluates the tenant, so each figure has a default.
const dispatchSrc = `gpuform {
  stack     = "s"
  scheduler = "kueue"
}

cluster "hub" {
  role = "manager"
}

cluster "east" {
  kubeconfig_secret = "east"
  values = { gpus = 3, slices = 2, borrow = { gpus = 1 }, lend = { gpus = 2 }, cpu = "1500m", memory = "1Gi", pods = 4 }
}

cluster "west" {
  kubeconfig_secret = "west"
  values = { gpus = 5, cpu = "2", pods = 6 }
}

mig_layout "half" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "a" {
  gpu      = "A100-80GB"
  clusters = ["east", "west"]
}

pool "m" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.half
  clusters   = ["east"]
}

tenant "t" {
  dispatch = "multikueue"
  cohort   = "c"
  quota "a" {
    gpus            = lookup(cluster.values, "gpus", 0)
    borrowing_limit = lookup(cluster.values, "borrow", {})
    lending_limit   = lookup(cluster.values, "lend", {})
  }
  quota "m" {
    slices = { "3g.40gb" = lookup(cluster.values, "slices", 0) }
  }
  cpu    = lookup(cluster.values, "cpu", "1")
  memory = cluster.name == "west" ? null : lookup(cluster.values, "memory", "1Gi")
  pods   = lookup(cluster.values, "pods", 0)
}

tenant "local" {
  quota "a" {
    gpus = 1
  }
}
`

// quotaLines describes a tenant's quota blocks and node limits, one line
// each, sorted maps.
func quotaLines(t *config.Tenant) []string {
	out := []string{fmt.Sprintf("cpu=%q memory=%q pods=%d", t.CPU, t.Memory, t.Pods)}
	for _, q := range t.Quotas {
		pool := "<nil>"
		if q.Pool != nil {
			pool = q.Pool.Name
		}
		out = append(out, fmt.Sprintf("%s (pool %s): gpus=%d slices=%v borrowing=%v lending=%v", q.PoolName, pool, q.GPUs, sorted(q.Slices), sorted(q.BorrowingLimit), sorted(q.LendingLimit)))
	}
	return out
}

func sorted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func tenantOf(cfg *config.Config, name string) *config.Tenant {
	for _, t := range cfg.Tenants {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TestManagerQuotaSumsWorkers: on the manager, a dispatched tenant's quota
// is the sum over its workers of what it has on each, per pool and key:
// gpus, slices, a borrowing limit left out where a worker leaves it out
// (unbounded there), a lending limit a worker leaves out counted as its
// whole nominal quota, cpu summed, memory left out (unbounded) when one
// worker leaves it out, pods summed. The pools, on no worker placed on the
// manager, are its flavor pools; a tenant not dispatched keeps what the
// manager's own evaluation gives it (nothing here: a is not on hub).
func TestManagerQuotaSumsWorkers(t *testing.T) {
	cfg, diags := loadMain(dispatchSrc, "hub")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := []string{
		`cpu="3500m" memory="" pods=10`,
		"a (pool a): gpus=8 slices={} borrowing={} lending={gpus:7}",
		"m (pool m): gpus=0 slices={3g.40gb:2} borrowing={} lending={}",
	}
	if got := quotaLines(tenantOf(cfg, "t")); !slices.Equal(got, want) {
		t.Errorf("t on the manager:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if got := names(cfg.FlavorPools); !slices.Equal(got, []string{"a", "m"}) || len(cfg.Pools) != 0 {
		t.Errorf("flavor pools %q, pools %q; want a and m, and no pool", got, names(cfg.Pools))
	}
	if tenantOf(cfg, "local") != nil {
		t.Error("tenant local, placed where pool a is, is on the manager")
	}
	for _, w := range []string{"east", "west"} {
		wc, diags := loadMain(dispatchSrc, w)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		if len(wc.FlavorPools) != 0 {
			t.Errorf("worker %s has flavor pools %q", w, names(wc.FlavorPools))
		}
	}
	east, _ := loadMain(dispatchSrc, "east")
	if got, want := quotaLines(tenantOf(east, "t"))[1], "a (pool a): gpus=3 slices={} borrowing={gpus:1} lending={gpus:2}"; got != want {
		t.Errorf("t on east: %s, want its own quota %s", got, want)
	}
}

// TestManagerQuotaWithItsOwnPool: a pool placed on the manager and the
// workers names the manager's own pool in the sum, adds no flavor pool,
// and the manager's own figure (hub's values) plays no part.
func TestManagerQuotaWithItsOwnPool(t *testing.T) {
	src := strings.Replace(dispatchSrc, "role = \"manager\"", "role = \"manager\"\n  values = { gpus = 100 }", 1)
	src = strings.Replace(src, "clusters = [\"east\", \"west\"]", "", 1)
	cfg, diags := loadMain(src, "hub")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	q := tenantOf(cfg, "t").Quotas[0]
	if q.PoolName != "a" || q.GPUs != 8 || q.Pool == nil || q.Pool != cfg.Pools[0] {
		t.Errorf("t's quota on a: %s, pool is the manager's %v; want 8 GPUs on the manager's pool a", quotaLines(tenantOf(cfg, "t"))[1], q.Pool == cfg.Pools[0])
	}
	if got := names(cfg.FlavorPools); !slices.Equal(got, []string{"m"}) {
		t.Errorf("flavor pools %q, want m only", got)
	}
}

// TestManagerAloneMatchesFleetLoad: the manager's configuration is the
// same loaded alone as from LoadFleetFS, sums included.
func TestManagerAloneMatchesFleetLoad(t *testing.T) {
	fsys := fstest.MapFS{"main.hcl": &fstest.MapFile{Data: []byte(dispatchSrc)}}
	listing, members, diags := config.LoadFleetFS(fsys, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	alone, _ := loadMain(dispatchSrc, "hub")
	hub := members[slices.Index(listing.FleetNames(), "hub")]
	if got, want := quotaLines(tenantOf(hub, "t")), quotaLines(tenantOf(alone, "t")); !slices.Equal(got, want) {
		t.Errorf("t on the manager from LoadFleetFS:\n  %s\nloaded alone:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if fmt.Sprint(hub.Flatten()) != fmt.Sprint(alone.Flatten()) || !slices.Equal(names(hub.FlavorPools), names(alone.FlavorPools)) || hub.Hash != alone.Hash {
		t.Errorf("the manager from LoadFleetFS differs from the manager loaded alone")
	}
}

// TestManagerAloneReportsWorkerErrors: the manager's quota depends on
// every worker's evaluation, so loading the manager alone reports an error
// found on a worker only, said for that worker, and fails.
func TestManagerAloneReportsWorkerErrors(t *testing.T) {
	src := strings.Replace(dispatchSrc, `gpus            = lookup(cluster.values, "gpus", 0)`, `gpus            = cluster.name == "hub" ? 0 : cluster.values.gpus`, 1)
	src = strings.Replace(src, `values = { gpus = 5, cpu = "2", pods = 6 }`, `values = { cpu = "2", pods = 6 }`, 1)
	_, diags := loadMain(src, "hub")
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `(Evaluated for cluster "west".)`) {
		t.Errorf("diagnostics %q; want west's error on cluster.values.gpus", diags.Error())
	}
	if _, diags := loadMain(src, "east"); diags.HasErrors() {
		t.Errorf("east alone: %s; want no error (it needs no other member)", diags.Error())
	}
}
