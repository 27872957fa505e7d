package mig

import (
	"slices"
	"sort"
	"testing"
)

func TestOperatorConfigsSolve(t *testing.T) {
	for _, g := range migGPUs() {
		key := g.Key
		configs := OperatorConfigs(g)
		if len(configs) == 0 {
			t.Fatalf("%s: no operator configs", key)
		}
		for name, layout := range configs {
			got, err := Solve(g, layout)
			if err != nil {
				t.Errorf("%s %s %v: %v", key, name, layout, err)
				continue
			}
			checkPlacement(t, g, layout, got)
		}
		if _, ok := configs[OperatorAllBalanced]; !ok {
			t.Errorf("%s: no all-balanced config", key)
		}
	}
}

func TestOperatorConfigsNames(t *testing.T) {
	configs := OperatorConfigs(mustLookup(t, "A100-80GB"))
	var names []string
	for name := range configs {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{
		"all-1g.10gb", "all-1g.10gb.me", "all-1g.20gb", "all-2g.20gb", "all-3g.40gb", "all-4g.40gb", "all-7g.80gb",
		"all-balanced", "all-disabled", "all-enabled",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	if configs["all-disabled"] != nil {
		t.Errorf("all-disabled = %v, want nil", configs["all-disabled"])
	}
	if l := configs["all-enabled"]; l == nil || len(l) != 0 {
		t.Errorf("all-enabled = %#v, want an empty map", l)
	}
	if l := configs["all-1g.10gb"]; len(l) != 1 || l["1g.10gb"] != 7 {
		t.Errorf("all-1g.10gb = %v", l)
	}
	if l := configs["all-1g.10gb.me"]; len(l) != 1 || l["1g.10gb+me"] != 1 {
		t.Errorf("all-1g.10gb.me = %v", l)
	}
	if l := configs["all-balanced"]; len(l) != 3 || l["1g.10gb"] != 2 || l["2g.20gb"] != 1 || l["3g.40gb"] != 1 {
		t.Errorf("all-balanced = %v", l)
	}
}

func TestOperatorConfigsBalanced(t *testing.T) {
	want := map[string]map[string]int{
		"A30-24GB":   {"1g.6gb": 2, "2g.12gb": 1},
		"A100-40GB":  {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1},
		"H100-80GB":  {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
		"H100-94GB":  {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1},
		"H200-141GB": {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1},
		"B200-180GB": {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1},
	}
	for key, w := range want {
		got := OperatorConfigs(mustLookup(t, key))[OperatorAllBalanced]
		if len(got) != len(w) {
			t.Errorf("%s all-balanced = %v, want %v", key, got, w)
			continue
		}
		for p, n := range w {
			if got[p] != n {
				t.Errorf("%s all-balanced = %v, want %v", key, got, w)
			}
		}
	}
}

func TestOperatorConfigsNoMIG(t *testing.T) {
	for _, key := range []string{"L4", "L40S", "T4"} {
		if c := OperatorConfigs(mustLookup(t, key)); c != nil {
			t.Errorf("%s: OperatorConfigs = %v, want nil", key, c)
		}
	}
	if c := OperatorConfigs(nil); c != nil {
		t.Errorf("OperatorConfigs(nil) = %v", c)
	}
}

func TestOperatorConfigsFresh(t *testing.T) {
	g := mustLookup(t, "A100-40GB")
	a := OperatorConfigs(g)
	a[OperatorAllBalanced]["1g.5gb"] = 99
	a["all-1g.5gb"]["1g.5gb"] = 99
	b := OperatorConfigs(g)
	if b[OperatorAllBalanced]["1g.5gb"] != 2 || b["all-1g.5gb"]["1g.5gb"] != 7 {
		t.Fatalf("changing one result changed the next: %v", b)
	}
}

func TestOperatorConfigName(t *testing.T) {
	for in, want := range map[string]string{
		"1g.10gb":    "all-1g.10gb",
		"1g.10gb+me": "all-1g.10gb.me",
		"2g.12gb+me": "all-2g.12gb.me",
	} {
		if got := OperatorConfigName(in); got != want {
			t.Errorf("OperatorConfigName(%q) = %q, want %q", in, got, want)
		}
	}
}
