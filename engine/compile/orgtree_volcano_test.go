package compile_test

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// volcanoOrgSource is orgSource as Volcano takes it: no lending limits
// and no department weight (Volcano has neither), a tenant outside the
// tree. ai (4 of its own) holds research (1 of its own, may borrow 2
// beyond its subtree) and product; research holds alpha (2) and beta (3),
// product gamma (2). EXTRA is replaced by each case.
const volcanoOrgSource = `
gpuform {
  stack     = "org"
  scheduler = "volcano"
}

pool "a100" {
  gpu = "A100-80GB"
}

department "ai" {
  quota "a100" {
    gpus = 4
  }
}

department "research" {
  parent = department.ai
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 2 }
  }
}

department "product" {
  parent = department.ai
}

tenant "alpha" {
  department = department.research
  quota "a100" {
    gpus = 2
  }
}

tenant "beta" {
  department = department.research
  quota "a100" {
    gpus = 3
  }
}

tenant "gamma" {
  department = department.product
  quota "a100" {
    gpus = 2
  }
}

tenant "solo" {
  quota "a100" {
    gpus = 1
  }
}
EXTRA
`

func volcanoOrgConfig(extra string) string {
	return strings.Replace(volcanoOrgSource, "EXTRA", extra, 1)
}

// compileSource loads, validates and compiles src, failing on any error,
// and returns its objects by "Kind/namespace/name".
func compileSource(t *testing.T, src string) map[string]*engine.Object {
	t.Helper()
	d := compileDesired(t, src)
	objs := map[string]*engine.Object{}
	for _, o := range d.Objects {
		objs[o.Object.GetKind()+"/"+o.Object.GetNamespace()+"/"+o.Object.GetName()] = o
	}
	return objs
}

// compileDesired loads, validates and compiles src, failing on any error.
func compileDesired(t *testing.T, src string) *engine.Desired {
	t.Helper()
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOrgTreeCompilesToVolcanoQueues: under Volcano each department is a
// Queue named <stack>-<department> whose parent is its parent's Queue (or
// root), deserving its subtree's quotas and capped, where it may borrow
// only so much, at that plus its borrowing limit (a top-level department
// at its subtree: top-level trees do not share); each tenant's Queue is a
// leaf under its department's, deserving its quota and capped at what the
// tree lets it reach, which its ResourceQuota allows too. A tenant outside
// the tree keeps today's Queue.
func TestOrgTreeCompilesToVolcanoQueues(t *testing.T) {
	objs := compileSource(t, volcanoOrgConfig(""))
	str := func(key string, path ...string) string {
		t.Helper()
		o := objs[key]
		if o == nil {
			t.Fatalf("no object %s", key)
		}
		s, _, _ := unstructured.NestedString(o.Object.Object, path...)
		return s
	}
	gpu := "nvidia.com/gpu"
	checks := []struct {
		key, want string
		path      []string
	}{
		{"Queue//org-ai", "root", []string{"spec", "parent"}},
		// ai: its 4, research's 1+2+3 and product's 0+2.
		{"Queue//org-ai", "12", []string{"spec", "deserved", gpu}},
		{"Queue//org-ai", "12", []string{"spec", "capability", gpu}},
		{"Queue//org-research", "org-ai", []string{"spec", "parent"}},
		{"Queue//org-research", "6", []string{"spec", "deserved", gpu}},
		{"Queue//org-research", "8", []string{"spec", "capability", gpu}},
		{"Queue//org-product", "org-ai", []string{"spec", "parent"}},
		{"Queue//org-product", "2", []string{"spec", "deserved", gpu}},
		{"Queue//org-product", "", []string{"spec", "capability", gpu}}, // no limit: ai's
		{"Queue//alpha", "org-research", []string{"spec", "parent"}},
		{"Queue//alpha", "2", []string{"spec", "deserved", gpu}},
		// alpha: research's subtree 6 and at most 2 from ai.
		{"Queue//alpha", "8", []string{"spec", "capability", gpu}},
		{"ResourceQuota/alpha/gpuform", "8", []string{"spec", "hard", "requests.nvidia.com/gpu"}},
		{"Queue//beta", "8", []string{"spec", "capability", gpu}},
		// gamma: all of ai's tree.
		{"Queue//gamma", "org-product", []string{"spec", "parent"}},
		{"Queue//gamma", "12", []string{"spec", "capability", gpu}},
		{"ResourceQuota/gamma/gpuform", "12", []string{"spec", "hard", "requests.nvidia.com/gpu"}},
		{"Queue//solo", "", []string{"spec", "parent"}},
		{"Queue//solo", "", []string{"spec", "deserved", gpu}},
		{"Queue//solo", "1", []string{"spec", "capability", gpu}},
		{"ResourceQuota/solo/gpuform", "1", []string{"spec", "hard", "requests.nvidia.com/gpu"}},
	}
	for _, c := range checks {
		if got := str(c.key, c.path...); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.key, strings.Join(c.path, "."), got, c.want)
		}
	}
	for child, parent := range map[string]string{"org-research": "org-ai", "alpha": "org-research", "gamma": "org-product"} {
		want := engine.KeyFor(engine.KindVolcanoQueue, "", parent)
		found := false
		for _, k := range objs["Queue//"+child].DependsOn {
			found = found || k == want
		}
		if !found {
			t.Errorf("Queue %s depends on %v, not on its parent Queue %s", child, objs["Queue//"+child].DependsOn, parent)
		}
	}
	if v, ok, _ := unstructured.NestedFieldNoCopy(objs["Queue//org-ai"].Object.Object, "spec", "reclaimable"); ok {
		t.Errorf("department Queue org-ai has spec.reclaimable %v: a department holds no jobs", v)
	}
}

// TestVolcanoQueuesPassTheWebhookRules: the Queues of valid trees keep
// the rules Volcano's admission webhook (v1.15.1,
// pkg/webhooks/admission/queues/validate) refuses a Queue for breaking,
// each checked here on the compiled objects: deserved at most capability;
// a capability at most the nearest ancestor's that sets the resource; the
// children's deserved at most their parent's; a parent that exists (root,
// or a Queue the child waits for); at most 5 levels under root.
func TestVolcanoQueuesPassTheWebhookRules(t *testing.T) {
	deep := `department "d1" {
  quota "a100" {
    gpus = 1
  }
}
department "d2" {
  parent = department.d1
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 1 }
  }
}
department "d3" {
  parent = department.d2
}
department "d4" {
  parent = department.d3
  quota "a100" {
    gpus            = 2
    borrowing_limit = { gpus = 3 }
  }
}
tenant "leaf" {
  department = department.d4
  quota "a100" {
    gpus = 1
  }
}
tenant "mid" {
  department = department.d2
  quota "a100" {
    gpus = 2
  }
}`
	for name, src := range map[string]string{"org": volcanoOrgConfig(""), "four levels": volcanoOrgConfig(deep)} {
		t.Run(name, func(t *testing.T) {
			objs := compileSource(t, src)
			queues := map[string]*engine.Object{}
			for _, o := range objs {
				if o.Object.GetKind() == "Queue" {
					queues[o.Object.GetName()] = o
				}
			}
			for _, e := range volcanoWebhookErrors(queues) {
				t.Error(e)
			}
		})
	}
}

// volcanoWebhookErrors checks queues (by name) against the rules of
// Volcano v1.15.1's Queue admission webhook that a tree can break.
func volcanoWebhookErrors(queues map[string]*engine.Object) []string {
	counts := func(o *engine.Object, field string) map[string]int64 {
		m, _, _ := unstructured.NestedStringMap(o.Object.Object, "spec", field)
		out := map[string]int64{}
		for r, s := range m {
			if r == "cpu" || r == "memory" {
				continue
			}
			n, _ := strconv.ParseInt(s, 10, 64)
			out[r] = n
		}
		return out
	}
	parentOf := func(o *engine.Object) string {
		p, _, _ := unstructured.NestedString(o.Object.Object, "spec", "parent")
		return p
	}
	var errs []string
	children := map[string]map[string]int64{}
	for name, o := range queues {
		des, capa := counts(o, "deserved"), counts(o, "capability")
		for r, n := range des {
			if c, ok := capa[r]; ok && n > c {
				errs = append(errs, name+": deserved["+r+"] over capability")
			}
		}
		depth := 1
		for p := parentOf(o); p != "" && p != "root"; p = parentOf(queues[p]) {
			if queues[p] == nil {
				errs = append(errs, name+": parent "+p+" is no Queue")
				break
			}
			if depth++; depth > 5 {
				errs = append(errs, name+": deeper than 5 levels")
				break
			}
		}
		p := parentOf(o)
		if p == "" || p == "root" || queues[p] == nil {
			continue
		}
		waits := false
		for _, k := range o.DependsOn {
			waits = waits || k == engine.KeyFor(engine.KindVolcanoQueue, "", p)
		}
		if !waits {
			errs = append(errs, name+": does not wait for its parent "+p)
		}
		if children[p] == nil {
			children[p] = map[string]int64{}
		}
		for r, n := range des {
			children[p][r] += n
		}
		for r, n := range capa {
			for a := p; a != "" && a != "root" && queues[a] != nil; a = parentOf(queues[a]) {
				if up, ok := counts(queues[a], "capability")[r]; ok && up > 0 {
					if n > up {
						errs = append(errs, name+": capability["+r+"] "+strconv.FormatInt(n, 10)+" over its ancestor "+a+"'s "+strconv.FormatInt(up, 10))
					}
					break
				}
			}
		}
	}
	for p, sum := range children {
		des := counts(queues[p], "deserved")
		for r, n := range sum {
			if n > des[r] {
				errs = append(errs, p+": children's deserved["+r+"] over its own")
			}
		}
	}
	return errs
}

// TestOrgTreeValidationUnderVolcano: each configuration has one error, at
// the line marked "# here", before any cluster call.
func TestOrgTreeValidationUnderVolcano(t *testing.T) {
	chain := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString("department \"c" + strconv.Itoa(i) + "\" {\n")
			if i > 1 {
				b.WriteString("  parent = department.c" + strconv.Itoa(i-1) + "\n")
			}
			b.WriteString("}\n")
		}
		return b.String()
	}
	tests := []struct{ name, src, summary string }{
		{"valid", "", ""},
		{"four departments deep", chain(4) + "tenant \"t\" {\n  department = department.c4\n}\n", ""},
		{"five departments deep: the tenant's Queue would be a sixth level", chain(5) + "tenant \"t\" {\n  department = department.c5 # here\n}\n", "Department tree too deep for Volcano"},
		{"capability over the parent's", `department "lab" {
  parent = department.ai
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 20 } # here
  }
}
tenant "delta" {
  department = department.lab
}`, "Capability over the parent Queue's"},
		{"tenant borrowing per pool over its department's limit across pools", `pool "h100" {
  gpu = "H100-80GB"
}
department "lab" {
  parent = department.ai
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 1 }
  }
  quota "h100" {
    gpus = 1
  }
}
tenant "delta" {
  department = department.lab # here
  quota "h100" {
    gpus = 1
  }
}
tenant "eps" {
  department = department.ai
  quota "h100" {
    gpus = 5
  }
}`, "Capability over the parent Queue's"},
		{"lending limit", `department "lab" {
  parent = department.ai
  quota "a100" {
    gpus          = 1
    lending_limit = { gpus = 1 } # here
  }
}
tenant "delta" {
  department = department.lab
}`, "Lending limit under Volcano"},
		{"limit on a top-level department", `department "top" {
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 1 } # here
  }
}
tenant "delta" {
  department = department.top
}`, "Limit on a top-level department"},
		{"department weight", `department "lab" {
  parent = department.ai
  weight = 2 # here
}
tenant "delta" {
  department = department.lab
}`, "Argument for another scheduler"},
		{"queue name of a tenant's namespace", `tenant "delta" {
  namespace = "org-research" # here
}`, "Volcano Queue name taken"},
		{"queue name not a DNS subdomain", `department "Big_Team" { # here
  parent = department.ai
}
tenant "delta" {
  department = department.Big_Team
}`, "Invalid Volcano Queue name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			validateAtHere(t, volcanoOrgConfig(tt.src), tt.summary, tt.summary == "")
		})
	}
}
