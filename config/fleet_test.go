package config_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
)

// fleetBase is a fleet of two members, eu and us, and one pool on both.
const fleetBase = `gpuform {
  stack = "s"
}

cluster "eu" {
  labels = { region = "eu" }
  values = { gpus = 4 }
}

cluster "us" {
  labels = { region = "us" }
  values = { gpus = 2 }
}

pool "a" {
  gpu = "A100-80GB"
}
`

// singleBase is a single-cluster configuration.
const singleBase = `gpuform {
  stack = "s"
}

cluster {
  context = "prod"
}

pool "a" {
  gpu = "A100-80GB"
}
`

// loadMain loads src as main.hcl for member (empty: the fleet's listing).
func loadMain(src, member string) (*config.Config, hcl.Diagnostics) {
	return config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{Cluster: member})
}

// posOf is main.hcl:LINE:COL of the first byte of marker's last
// occurrence in src.
func posOf(t *testing.T, src, marker string) string {
	t.Helper()
	i := strings.LastIndex(src, marker)
	if i < 0 {
		t.Fatalf("%q is not in the source", marker)
	}
	line := strings.Count(src[:i], "\n") + 1
	return fmt.Sprintf("main.hcl:%d:%d", line, i-strings.LastIndex(src[:i], "\n"))
}

// where is a diagnostic's file:line:col, or "" without a subject.
func where(d *hcl.Diagnostic) string {
	if d.Subject == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
}

// Every error of the fleet language, at the place it is written: for the
// fleet's listing (every member evaluated) and, where the mistake is not in
// the cluster blocks, for one member too.
func TestFleetErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, summary, at string
		// member also loads the configuration for this member and wants
		// the same error there.
		member string
	}{
		{"an unnamed cluster block among named ones", fleetBase + "cluster {\n  context = \"x\"\n}\n", "Unnamed cluster block in a fleet", "cluster {", ""},
		{"a duplicate name", fleetBase + "cluster \"eu\" {}\n", "Duplicate cluster block", "\"eu\" {}", ""},
		{"a name that is not a DNS label", fleetBase + "cluster \"EU_2\" {}\n", "Invalid cluster name", "\"EU_2\"", ""},
		{"a name too long", fleetBase + "cluster \"" + strings.Repeat("a", 64) + "\" {}\n", "Invalid cluster name", "\"aaaa", ""},
		{"two managers", fleetBase + "cluster \"m1\" {\n  role = \"manager\"\n}\ncluster \"m2\" {\n  role = \"manager\"\n}\n", "Two manager clusters", "\"manager\"", ""},
		{"a role that is not manager", fleetBase + "cluster \"m\" {\n  role = \"boss\"\n}\n", "Invalid value", "\"boss\"", ""},
		{"kubeconfig_secret on the manager", fleetBase + "cluster \"m\" {\n  role = \"manager\"\n  kubeconfig_secret = \"m\"\n}\n", "Secret named for the manager", "\"m\"\n}", ""},
		{"a kubeconfig_secret that is no Secret name", fleetBase + "cluster \"w\" {\n  kubeconfig_secret = \"Not/A/Name\"\n}\n", "Invalid kubeconfig_secret", "\"Not/A/Name\"", ""},
		{"values that are not an object", fleetBase + "cluster \"w\" {\n  values = [1]\n}\n", "Invalid cluster values", "[1]", ""},
		{"a reference in a cluster block", fleetBase + "variable \"x\" {\n  default = \"c\"\n}\ncluster \"w\" {\n  context = var.x\n}\n", "References not allowed here", "var.x", ""},
		{"an unknown cluster in clusters", fleetBase + "pool \"b\" {\n  gpu = \"H100-80GB\"\n  clusters = [\"eu\", \"nope\"]\n}\n", "Unknown cluster", "\"nope\"", "eu"},
		{"both clusters and cluster_selector", fleetBase + "pool \"b\" {\n  gpu = \"H100-80GB\"\n  clusters = [\"eu\"]\n  cluster_selector = { region = \"eu\" }\n}\n", "Conflicting placement", "{ region = \"eu\" }\n}", "us"},
		{"a selector that matches nothing", fleetBase + "pool \"b\" {\n  gpu = \"H100-80GB\"\n  cluster_selector = { region = \"mars\" }\n}\n", "Placement matches no cluster", "{ region = \"mars\" }", "eu"},
		{"a model where its pool is not", fleetBase + "pool \"b\" {\n  gpu = \"H100-80GB\"\n  clusters = [\"eu\"]\n}\ntenant \"t\" {\n  quota \"a\" {\n    gpus = 1\n  }\n  quota \"b\" {\n    gpus = 1\n  }\n}\nmodel \"m\" {\n  tenant = tenant.t\n  pool = pool.b\n  format = \"pytorch\"\n  storage_uri = \"s3://m\"\n  clusters = [\"eu\", \"us\"]\n}\n", "Model placed where its pool or tenant is not", "\"us\"]\n}\n", "eu"},
		{"a model where its tenant is not", fleetBase + "tenant \"t\" {\n  clusters = [\"eu\"]\n  quota \"a\" {\n    gpus = 1\n  }\n}\nmodel \"m\" {\n  tenant = tenant.t\n  pool = pool.a\n  format = \"pytorch\"\n  storage_uri = \"s3://m\"\n  cluster_selector = { region = \"us\" }\n}\n", "Model placed where its pool or tenant is not", "{ region = \"us\" }", "us"},
		{"a tenant named where none of its pools is", fleetBase + "pool \"b\" {\n  gpu = \"H100-80GB\"\n  clusters = [\"eu\"]\n}\ntenant \"t\" {\n  clusters = [\"us\"]\n  quota \"b\" {\n    gpus = 1\n  }\n}\n", "Tenant placed where none of its pools is", "\"us\"]", "eu"},
		{"multikueue without a manager", fleetBase + "tenant \"t\" {\n  dispatch = \"multikueue\"\n}\n", "No manager cluster", "\"multikueue\"", "us"},
		{"a dispatch that is not multikueue", fleetBase + "tenant \"t\" {\n  dispatch = \"pigeon\"\n}\n", "Invalid value", "\"pigeon\"", "eu"},
		{"a value a member lacks", strings.Replace(fleetBase, "values = { gpus = 2 }", "values = {}", 1) + "tenant \"t\" {\n  quota \"a\" {\n    gpus = cluster.values.gpus\n  }\n}\n", "Unsupported attribute", ".gpus\n", "us"},
		{"placement in a single-cluster configuration", singleBase + "pool \"b\" {\n  gpu = \"H100-80GB\"\n  clusters = [\"eu\"]\n}\n", "Placement outside a fleet", "[\"eu\"]", ""},
		{"a selector in a single-cluster configuration", singleBase + "tenant \"t\" {\n  cluster_selector = { a = \"b\" }\n}\n", "Placement outside a fleet", "{ a = \"b\" }", ""},
		{"dispatch in a single-cluster configuration", singleBase + "tenant \"t\" {\n  dispatch = \"multikueue\"\n}\n", "Placement outside a fleet", "\"multikueue\"", ""},
		{"a fleet argument in the unnamed cluster block", strings.Replace(singleBase, "context = \"prod\"", "context = \"prod\"\n  labels = { a = \"b\" }", 1), "Fleet argument in the cluster block", "{ a = \"b\" }", ""},
		{"cluster in a single-cluster configuration", singleBase + "pool \"b\" {\n  gpu = cluster.name\n}\n", "Unknown reference", "cluster.name", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := posOf(t, tc.src, tc.at)
			members := []string{""}
			if tc.member != "" {
				members = append(members, tc.member)
			}
			for _, member := range members {
				_, diags := loadMain(tc.src, member)
				if !diags.HasErrors() {
					t.Fatalf("member %q: loaded without an error; want %q at %s", member, tc.summary, want)
				}
				var got []string
				found := false
				for _, d := range diags {
					got = append(got, fmt.Sprintf("%s: %s", where(d), d.Summary))
					if d.Summary == tc.summary && where(d) == want {
						found = true
					}
				}
				if !found {
					t.Errorf("member %q: diagnostics\n  %s\nwant %q at %s", member, strings.Join(got, "\n  "), tc.summary, want)
				}
			}
		})
	}
}

// A fleet's error found for each member is reported once; one found for
// some members says which.
func TestFleetErrorReportedOnce(t *testing.T) {
	src := fleetBase + "tenant \"t\" {\n  weight = \"heavy\"\n  quota \"a\" {\n    gpus = cluster.values.cpus\n  }\n}\n"
	src = strings.Replace(src, "values = { gpus = 2 }", "values = { gpus = 2, cpus = 1 }", 1)
	_, diags := loadMain(src, "")
	count := map[string]int{}
	for _, d := range diags {
		count[d.Summary]++
		if d.Summary == "Unsupported attribute" && !strings.Contains(d.Detail, `(Evaluated for cluster "eu".)`) {
			t.Errorf("the error found only for eu does not say so: %s", d.Detail)
		}
		if d.Summary == "Incorrect attribute value type" && strings.Contains(d.Detail, "Evaluated for") {
			t.Errorf("the error found for every member names members: %s", d.Detail)
		}
	}
	if count["Incorrect attribute value type"] != 1 || count["Unsupported attribute"] != 1 {
		t.Errorf("diagnostics %v; want each error once:\n%s", count, diags.Error())
	}
}

// Asking a member of a configuration that has none, or one the fleet does
// not have, is a clear error.
func TestFleetUnknownMember(t *testing.T) {
	for _, tc := range []struct{ src, member, summary string }{
		{fleetBase, "asia", "Unknown cluster"},
		{singleBase, "eu", "Not a fleet"},
	} {
		_, diags := loadMain(tc.src, tc.member)
		if !diags.HasErrors() || diags[0].Summary != tc.summary {
			t.Errorf("member %q: %v; want %q", tc.member, diags, tc.summary)
		}
	}
}

// placementSrc places every kind of block: a pool on every member (a), a
// pool by name (h on burst), a pool by selector (l on us members), tenants
// by default, narrowed, by selector and through MultiKueue, models by
// default and by name.
const placementSrc = `gpuform {
  stack     = "s"
  scheduler = "kueue"
}

cluster "eu" {
  role   = "manager"
  labels = { region = "eu" }
  values = { gpus = 4 }
}

cluster "us" {
  labels            = { region = "us" }
  values            = { gpus = 2 }
  kubeconfig_secret = "us"
}

cluster "burst" {
  labels            = { region = "us", burst = "yes" }
  kubeconfig_secret = "burst"
}

priority "p" {
  value = 10
}

locals {
  node_group = "a-${cluster.name}"
}

pool "a" {
  gpu           = "A100-80GB"
  node_selector = { "gpuform.io/pool" = local.node_group }
}

pool "h" {
  gpu      = "H100-80GB"
  clusters = ["burst"]
}

pool "l" {
  gpu              = "L4"
  cluster_selector = { region = "us" }
}

department "d" {}

department "d2" {}

tenant "all" {
  department = department.d
  quota "a" {
    gpus = lookup(cluster.values, "gpus", 1)
  }
}

tenant "gpuh" {
  quota "h" {
    gpus = 1
  }
}

tenant "narrow" {
  department = department.d2
  clusters   = ["us"]
  quota "a" {
    gpus = 1
  }
  quota "h" {
    gpus = 1
  }
}

tenant "byselector" {
  cluster_selector = { burst = "yes" }
  quota "a" {
    gpus = 1
  }
  quota "l" {
    gpus = 1
  }
}

tenant "usonly" {
  cluster_selector = { region = "us" }
  quota "h" {
    gpus = 1
  }
}

tenant "mk" {
  dispatch = "multikueue"
  quota "l" {
    gpus = 1
  }
}

tenant "noquota" {}

model "onh" {
  tenant      = tenant.gpuh
  pool        = pool.h
  format      = "pytorch"
  storage_uri = "s3://m"
}

model "ona" {
  tenant      = tenant.all
  pool        = pool.a
  format      = "pytorch"
  storage_uri = "s3://m"
  clusters    = ["us"]
}

model "defaulted" {
  tenant      = tenant.all
  pool        = pool.a
  format      = "pytorch"
  storage_uri = "s3://m"
}
`

// The placement defaults and a selector: what each member keeps, where
// each tenant is (Tenant.Clusters), the quotas kept, the per-member values.
func TestFleetPlacement(t *testing.T) {
	type want struct {
		pools, tenants, models, departments []string
		// quotas are tenant -> its pools on the member.
		quotas map[string][]string
		// gpus is tenant all's quota in pool a; selector pool a's node
		// selector, through a local that reads cluster.name.
		gpus     int
		selector string
	}
	for _, tc := range []struct {
		member string
		want   want
	}{
		{"eu", want{
			pools: []string{"a"}, tenants: []string{"all", "mk", "noquota"}, models: []string{"defaulted"}, departments: []string{"d"},
			// mk, dispatched from the manager eu, has there the sum of
			// its workers' quotas: pool l, not placed on eu.
			quotas: map[string][]string{"all": {"a"}, "mk": {"l"}}, gpus: 4, selector: "a-eu",
		}},
		{"us", want{
			pools: []string{"a", "l"}, tenants: []string{"all", "narrow", "mk", "noquota"}, models: []string{"ona", "defaulted"}, departments: []string{"d", "d2"},
			quotas: map[string][]string{"all": {"a"}, "narrow": {"a"}, "mk": {"l"}}, gpus: 2, selector: "a-us",
		}},
		{"burst", want{
			pools: []string{"a", "h", "l"}, tenants: []string{"all", "gpuh", "byselector", "usonly", "mk", "noquota"}, models: []string{"onh", "defaulted"}, departments: []string{"d"},
			quotas: map[string][]string{"byselector": {"a", "l"}, "gpuh": {"h"}}, gpus: 1, selector: "a-burst",
		}},
	} {
		t.Run(tc.member, func(t *testing.T) {
			cfg, diags := loadMain(placementSrc, tc.member)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if cfg.Cluster.Name != tc.member || cfg.IsFleet() || len(cfg.Fleet) != 3 {
				t.Fatalf("Cluster %q, IsFleet %v, %d members; want %q, false, 3", cfg.Cluster.Name, cfg.IsFleet(), len(cfg.Fleet), tc.member)
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s %q; want %q", what, got, want)
				}
			}
			check("pools", names(cfg.Pools), tc.want.pools)
			check("tenants", names(cfg.Tenants), tc.want.tenants)
			check("models", names(cfg.Models), tc.want.models)
			check("departments", names(cfg.Departments), tc.want.departments)
			for _, tn := range cfg.Tenants {
				if qs, ok := tc.want.quotas[tn.Name]; ok {
					var got []string
					for _, q := range tn.Quotas {
						got = append(got, q.PoolName)
					}
					check("tenant "+tn.Name+" quotas", got, qs)
				}
				if tn.Name == "all" && tn.Quotas[0].GPUs != tc.want.gpus {
					t.Errorf("tenant all's quota is %d GPUs; want %d (cluster.values.gpus)", tn.Quotas[0].GPUs, tc.want.gpus)
				}
			}
			if got := cfg.Pools[0].NodeSelector["gpuform.io/pool"]; got != tc.want.selector {
				t.Errorf("pool a's node selector %q; want %q (cluster.name)", got, tc.want.selector)
			}
		})
	}
	// Where each block is, the same whichever member it is read from.
	cfg, diags := loadMain(placementSrc, "burst")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for name, want := range map[string][]string{
		"all": {"eu", "us", "burst"}, "gpuh": {"burst"}, "narrow": {"us"}, "byselector": {"burst"}, "usonly": {"burst"},
		"mk": {"eu", "us", "burst"}, "noquota": {"eu", "us", "burst"},
	} {
		for _, tn := range cfg.Tenants {
			if tn.Name == name && !slices.Equal(tn.Clusters, want) {
				t.Errorf("tenant %s is on %q; want %q", name, tn.Clusters, want)
			}
		}
	}
	for _, p := range cfg.Pools {
		want := map[string][]string{"a": {"eu", "us", "burst"}, "h": {"burst"}, "l": {"us", "burst"}}[p.Name]
		if !slices.Equal(p.Clusters, want) {
			t.Errorf("pool %s is on %q; want %q", p.Name, p.Clusters, want)
		}
	}
	for _, tn := range cfg.Tenants {
		if want := map[string]string{"mk": config.DispatchMultiKueue}[tn.Name]; tn.Dispatch != want {
			t.Errorf("tenant %s dispatch %q; want %q", tn.Name, tn.Dispatch, want)
		}
	}
	if m := cfg.Member("eu"); m == nil || m.Role != config.RoleManager || m.KubeconfigSecret != "" {
		t.Errorf("member eu: %+v; want the manager without a kubeconfig_secret", m)
	}
	if m := cfg.Member("us"); m == nil || m.KubeconfigSecret != "us" || m.Labels["region"] != "us" {
		t.Errorf("member us: %+v; want kubeconfig_secret us, region us", m)
	}
}

// Without Options.Cluster a fleet loads as its listing: every member,
// in source order, and nothing to plan; each member's hash differs.
func TestFleetListing(t *testing.T) {
	cfg, diags := loadMain(placementSrc, "")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if !cfg.IsFleet() || !slices.Equal(cfg.FleetNames(), []string{"eu", "us", "burst"}) {
		t.Fatalf("IsFleet %v, members %q; want the listing of eu, us, burst", cfg.IsFleet(), cfg.FleetNames())
	}
	if len(cfg.Pools)+len(cfg.Tenants)+len(cfg.Models)+len(cfg.Departments) != 0 || cfg.Settings.Stack != "s" {
		t.Errorf("the listing holds %d pools, %d tenants, %d models, stack %q; want none and stack s", len(cfg.Pools), len(cfg.Tenants), len(cfg.Models), cfg.Settings.Stack)
	}
	hashes := map[string]string{cfg.Hash: "listing"}
	for _, m := range cfg.FleetNames() {
		mc, diags := loadMain(placementSrc, m)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		if prev, dup := hashes[mc.Hash]; dup {
			t.Errorf("member %s has the hash of %s", m, prev)
		}
		hashes[mc.Hash] = m
	}
}

// A single-cluster configuration loads as it always has: no fleet, its
// cluster block unnamed, and its hash that of its inputs alone.
func TestSingleClusterIsNoFleet(t *testing.T) {
	cfg, diags := loadMain(singleBase, "")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if cfg.IsFleet() || len(cfg.Fleet) != 0 || cfg.Cluster.Name != "" || cfg.Cluster.Context != "prod" || len(cfg.Pools) != 1 || cfg.Pools[0].Clusters != nil {
		t.Errorf("single cluster: IsFleet %v, Fleet %d, Cluster %+v, pools %d", cfg.IsFleet(), len(cfg.Fleet), cfg.Cluster, len(cfg.Pools))
	}
}

// examples/fleet loads for each of its members, each with what is placed
// on it.
func TestFleetExampleLoadsForEachMember(t *testing.T) {
	listing, diags := config.LoadDir("../examples/fleet", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := map[string]struct{ pools, tenants, models []string }{
		"eu-train": {[]string{"a100"}, []string{"vision", "speech", "infra"}, nil},
		"us-train": {[]string{"a100"}, []string{"vision", "speech"}, nil},
		"burst":    {[]string{"h100"}, []string{"vision"}, []string{"detector"}},
	}
	if !slices.Equal(listing.FleetNames(), []string{"eu-train", "us-train", "burst"}) {
		t.Fatalf("members %q", listing.FleetNames())
	}
	for _, m := range listing.FleetNames() {
		cfg, diags := config.LoadDir("../examples/fleet", config.Options{Cluster: m})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", m, diags.Error())
		}
		w := want[m]
		if !slices.Equal(names(cfg.Pools), w.pools) || !slices.Equal(names(cfg.Tenants), w.tenants) || !slices.Equal(names(cfg.Models), w.models) {
			t.Errorf("%s: pools %q tenants %q models %q; want %q %q %q", m, names(cfg.Pools), names(cfg.Tenants), names(cfg.Models), w.pools, w.tenants, w.models)
		}
		if cfg.Cluster.Simulated != m+".sim.hcl" {
			t.Errorf("%s: simulated %q", m, cfg.Cluster.Simulated)
		}
	}
}

// names lists the Name of each block instance.
func names[T any](s []T) []string {
	var out []string
	for _, v := range s {
		out = append(out, reflect.ValueOf(v).Elem().FieldByName("Name").String())
	}
	return out
}

// LoadFleetFS gives, in one load of each member, the listing and every
// member's configuration as LoadFS gives them one by one.
func TestLoadFleetMatchesMemberLoads(t *testing.T) {
	fsys := fstest.MapFS{"main.hcl": &fstest.MapFile{Data: []byte(placementSrc)}}
	listing, members, diags := config.LoadFleetFS(fsys, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if !listing.IsFleet() || len(members) != 3 {
		t.Fatalf("IsFleet %v, %d members; want the listing and 3 members", listing.IsFleet(), len(members))
	}
	alone, _ := loadMain(placementSrc, "")
	if listing.Hash != alone.Hash {
		t.Errorf("the listing's hash differs from LoadFS's")
	}
	for i, name := range listing.FleetNames() {
		want, _ := loadMain(placementSrc, name)
		got := members[i]
		if got.Cluster.Name != name || got.Hash != want.Hash || !slices.Equal(names(got.Tenants), names(want.Tenants)) || !slices.Equal(names(got.Pools), names(want.Pools)) {
			t.Errorf("member %d: %s (hash %.8s, tenants %q, pools %q); want %s (hash %.8s, tenants %q, pools %q)",
				i, got.Cluster.Name, got.Hash, names(got.Tenants), names(got.Pools), name, want.Hash, names(want.Tenants), names(want.Pools))
		}
	}
	single, members, diags := config.LoadFleetFS(fstest.MapFS{"main.hcl": &fstest.MapFile{Data: []byte(singleBase)}}, config.Options{})
	if diags.HasErrors() || members != nil || single.IsFleet() || len(single.Pools) != 1 {
		t.Errorf("single cluster: %d members, IsFleet %v, %d pools, %v; want LoadFS's configuration alone", len(members), single.IsFleet(), len(single.Pools), diags)
	}
}

// A fleet evaluated for its members from one parse gives what separate
// loads give: the same blocks and values for each member, and the same
// diagnostics, merged.
func TestLoadFleetParsesOnceSameResult(t *testing.T) {
	withErrors := placementSrc + "tenant \"bad\" {\n  weight = \"heavy\"\n  quota \"a\" {\n    gpus = cluster.values.cpus\n  }\n}\n"
	withErrors = strings.Replace(withErrors, "values = { gpus = 2 }", "values = { gpus = 2, cpus = 1 }", 1)
	names := []string{"eu", "us", "burst"}
	for _, src := range []string{placementSrc, withErrors} {
		fsys := fstest.MapFS{"main.hcl": &fstest.MapFile{Data: []byte(src)}}
		_, members, _ := config.LoadFleetFS(fsys, config.Options{})
		var perMember []hcl.Diagnostics
		for i, name := range names {
			want, wantDiags := loadMain(src, name)
			perMember = append(perMember, wantDiags)
			if got := members[i]; fmt.Sprint(got.Flatten()) != fmt.Sprint(want.Flatten()) {
				t.Errorf("member %s from one parse:\n%v\nwant\n%v", name, got.Flatten(), want.Flatten())
			}
		}
		_, got := config.LoadFS(fsys, config.Options{})
		want := config.MergeMemberDiagnostics(names, perMember)
		if got.Error() != want.Error() || len(got) != len(want) {
			t.Errorf("the fleet's diagnostics\n%s\nwant\n%s", got.Error(), want.Error())
		}
		if src == withErrors && len(got) != 2 {
			t.Errorf("%d diagnostics; want the two errors: %s", len(got), got.Error())
		}
	}
}

// A second manager is an error at its role, and still a member: a
// placement naming it is not an unknown cluster.
func TestSecondManagerStaysMember(t *testing.T) {
	src := fleetBase + "cluster \"m1\" {\n  role = \"manager\"\n}\ncluster \"m2\" {\n  role = \"manager\"\n}\npool \"b\" {\n  gpu = \"H100-80GB\"\n  clusters = [\"m2\"]\n}\n"
	cfg, diags := loadMain(src, "")
	var summaries []string
	for _, d := range diags {
		summaries = append(summaries, d.Summary)
	}
	if !slices.Equal(summaries, []string{"Two manager clusters"}) || cfg.Member("m2") == nil {
		t.Errorf("diagnostics %q, member m2 %v; want only Two manager clusters, and m2 a member", summaries, cfg.Member("m2"))
	}
}
